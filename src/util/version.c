#include "ibmcast/common.h"

const char *imc_version(void)
{
	return IMC_VERSION;
}

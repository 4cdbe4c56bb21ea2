/* MAD, RMPP and SA headers: unpack -> pack gives the input bytes back,
 * and a second unpack -> pack gives the same bytes again. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mad.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROUND_TRIP(type, packfn, unpackfn, in, len, wire)                    \
	do {                                                                 \
		type a_, b_;                                                 \
		uint8_t o1_[wire], o2_[wire];                                \
		int rc_ = unpackfn(&a_, (in), (len));                        \
		if ((len) < (wire)) {                                        \
			if (rc_ != -EMSGSIZE)                                \
				abort();                                     \
			break;                                               \
		}                                                            \
		if (rc_ != (wire) || packfn(&a_, o1_, wire) != (wire) ||     \
		    memcmp(o1_, (in), wire))                                 \
			abort();                                             \
		if (unpackfn(&b_, o1_, wire) != (wire) ||                    \
		    packfn(&b_, o2_, wire) != (wire) ||                      \
		    memcmp(o1_, o2_, wire))                                  \
			abort();                                             \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t rmpp = IMC_MAD_HDR_SIZE, sa = rmpp + IMC_RMPP_HDR_SIZE;

	ROUND_TRIP(struct imc_mad_hdr, imc_mad_hdr_pack, imc_mad_hdr_unpack,
		   data, size, IMC_MAD_HDR_SIZE);
	if (size < rmpp)
		return 0;
	ROUND_TRIP(struct imc_rmpp_hdr, imc_rmpp_hdr_pack, imc_rmpp_hdr_unpack,
		   data + rmpp, size - rmpp, IMC_RMPP_HDR_SIZE);
	if (size < sa)
		return 0;
	ROUND_TRIP(struct imc_sa_hdr, imc_sa_hdr_pack, imc_sa_hdr_unpack,
		   data + sa, size - sa, IMC_SA_HDR_SIZE);
	return 0;
}

/* Internal interface between the namespace and TUN code of src/tun. */
#ifndef IMC_TUN_INT_H
#define IMC_TUN_INT_H

#include "ibmcast/tun.h"

/* Moves the calling thread into ns (setns); *saved gets an fd of the
 * namespace it was in, for tunl_netns_leave(). ns NULL: nothing to do,
 * *saved = -1. Returns 0 or a negative errno (nothing changed). */
int tunl_netns_enter(const struct imc_netns *ns, int *saved);

/* Moves the thread back into the namespace tunl_netns_enter() saved and
 * closes that fd; saved -1 is a no-op. Returns 0 or a negative errno: the
 * thread then stays in the other namespace, which callers report. */
int tunl_netns_leave(int saved);

#endif

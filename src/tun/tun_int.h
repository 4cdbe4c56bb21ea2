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

/* The IPv4 groups of ifindex in the text of /proc/net/igmp
 * (net/ipv4/igmp.c, igmp_mc_seq_show): a line "INDEX<TAB>NAME : ..." per
 * device, then one per group that starts with tabs and gives the group's
 * __be32 as 8 hex digits. fn gets each (AF_INET, network order). Lines
 * of another shape are skipped. Returns how many, or -EINVAL. */
int tunl_igmp_parse(const char *text, size_t len, unsigned ifindex,
		    imc_tun_mcast_fn *fn, void *ctx);

/* imc_tun_mcast_list()'s IPv4 part from /proc/net/igmp of the TUN's
 * namespace, for kernels that dump no IPv4 memberships: 0, -ENOENT when that file
 * could not be opened, or a negative errno. */
int tunl_mcast_list_igmp(struct imc_tun *t, imc_tun_mcast_fn *fn, void *ctx);

#endif

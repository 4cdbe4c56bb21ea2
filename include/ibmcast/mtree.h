/* Multicast spanning trees, one per MLID, kept up to date one member at a
 * time and written into switch multicast forwarding tables (MFTs, IBA
 * 18.2.4.4) through a callback.
 *
 * The tree of an MLID spans the switches its member ports hang off. The
 * MFT entry of a tree switch holds its ports toward tree neighbours plus
 * its member ports; a switch never forwards back out of the ingress port
 * (IBA 18.2.4.4), so a packet a member sends crosses each tree edge once
 * and reaches every other member port of its tree exactly once, and no
 * port that is not a member gets a copy.
 *
 * Joins and leaves are incremental: a join grafts the new member's switch
 * onto the tree by a shortest path over switch cables that are up (a
 * breadth-first search from that switch that stops at the first tree
 * switch it meets), a leave prunes the branch that served only that
 * member. Each touches only the switches whose entry changes, O(distance
 * to the tree) of them. When cables go down or come up, the owner calls
 * imc_mtree_rebuild_all(), which recomputes every tree over the cables
 * that are up, or imc_mtree_repair_all(), which mends the trees it has;
 * both report only the entries that differ.
 *
 * Members are HCA ports (node, port >= 1) or a switch's management port
 * (node, 0). A member whose cable is down or does not lead to a switch
 * stays a member off the tree until a rebuild or repair finds it a switch.
 * When the switches of an MLID's members fall apart into disconnected
 * parts, each part gets a tree of its own: every member reaches the
 * members it can reach over cables that are up.
 *
 * Pure computation: no clock, no I/O. Results depend only on the topology,
 * the link state and the order of calls, never on addresses; the trees a
 * rebuild makes depend only on the member sets and the link state.
 */
#ifndef IBMCAST_MTREE_H
#define IBMCAST_MTREE_H

#include "ibmcast/common.h"
#include "ibmcast/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ports 0..255 of a switch as a bit set, laid out like the fabric's
 * struct imc_portmask (bit p of bits[p / 64]). */
struct imc_mtree_mask {
	uint64_t bits[4];
};

static inline bool imc_mtree_mask_test(const struct imc_mtree_mask *m,
				       unsigned port)
{
	return (m->bits[(port >> 6) & 3] >> (port & 63)) & 1;
}

static inline bool imc_mtree_mask_empty(const struct imc_mtree_mask *m)
{
	return !(m->bits[0] | m->bits[1] | m->bits[2] | m->bits[3]);
}

struct imc_mtree_ops {
	/* Whether the cable at node:port is up now. NULL: every cable is. */
	bool (*link_up)(void *ctx, uint32_t node, unsigned port);
	/* The MFT entry of mlid on switch_node is now ports; an empty mask
	 * means no entry. Called from inside imc_mtree_add, _remove, _clear,
	 * _rebuild_all and _repair_all, once per changed switch (a new
	 * branch from the member's switch toward the tree). It must not
	 * call into the mtree; ports is valid during the call only. */
	void (*mft_set)(void *ctx, uint32_t switch_node, uint16_t mlid,
			const struct imc_mtree_mask *ports);
};

struct imc_mtree;

/* Creates an empty set of trees over topo, which must outlive it and may
 * grow (nodes added, ports cabled) between calls. ops is copied; ctx is
 * passed to it. Returns 0, -EINVAL (NULL topo, ops or mft_set) or
 * -ENOMEM. Free with imc_mtree_destroy. */
int imc_mtree_create(const struct imc_topo *topo,
		     const struct imc_mtree_ops *ops, void *ctx,
		     struct imc_mtree **out);

/* Frees every tree without reporting anything: MFT entries stay as they
 * were programmed (clear each MLID first to remove them). NULL is a
 * no-op. */
void imc_mtree_destroy(struct imc_mtree *mt);

/* node:port joins mlid's tree. Returns the number of MFT entries changed
 * (0 for a member that stays off the tree), -EEXIST when it is already a
 * member, -EINVAL for an MLID outside 0xC000..0xFFFE (IBA 4.1.3) or a port
 * that is neither an HCA port nor port 0 of a switch, -ENOMEM (nothing
 * changed then). */
int imc_mtree_add(struct imc_mtree *mt, uint16_t mlid, uint32_t node,
		  unsigned port);

/* node:port leaves mlid's tree; when it was the last member, every entry
 * of mlid is cleared. Returns the number of MFT entries changed, -ENOENT
 * when it is not a member, -EINVAL for bad arguments. */
int imc_mtree_remove(struct imc_mtree *mt, uint16_t mlid, uint32_t node,
		     unsigned port);

/* Removes every member of mlid, clearing its entries in increasing switch
 * order. Returns the number of entries cleared (0 for an unknown MLID),
 * -EINVAL for a bad MLID, -ENOMEM (nothing changed then). */
int imc_mtree_clear(struct imc_mtree *mt, uint16_t mlid);

/* Recomputes every MLID's tree from scratch over the cables up now (each
 * member's switch found anew), grafting members in increasing (node, port)
 * order, and reports the entries that differ from before, MLID by MLID in
 * increasing order, switches in increasing order. Returns the number of
 * entries changed, or -ENOMEM (MLIDs done before keep their new trees,
 * the rest their old ones). */
int imc_mtree_rebuild_all(struct imc_mtree *mt);

/* Brings every MLID's tree in line with the cables up now while keeping
 * what still works: members whose switch changed come off, tree edges
 * over cables that are down are cut, branches left leading nowhere are
 * pruned, pieces that can reach each other again are joined by shortest
 * paths (the piece holding the lowest switch first), and members that
 * found a switch are grafted on. Reports the entries that differ, as
 * rebuild_all does; after a local failure far fewer, but the trees then
 * depend on their history. Returns the number of entries changed or
 * -ENOMEM (MLIDs done before keep their new trees). */
int imc_mtree_repair_all(struct imc_mtree *mt);

/* The entry mlid has on switch sw as last reported (empty when none).
 * Returns 0, -EINVAL for a bad MLID or a node that is not a switch. */
int imc_mtree_entry(const struct imc_mtree *mt, uint16_t mlid, uint32_t sw,
		    struct imc_mtree_mask *out);

/* Whether node:port is a member of mlid. */
bool imc_mtree_is_member(const struct imc_mtree *mt, uint16_t mlid,
			 uint32_t node, unsigned port);

struct imc_mtree_group_info {
	uint32_t members;    /* member ports */
	uint32_t attached;   /* of those, on the tree */
	uint32_t switches;   /* switches with an entry */
	uint32_t edges;      /* switch-to-switch tree edges */
	uint32_t parts;      /* disconnected trees: switches - edges */
};

/* Shape of mlid's tree. Returns 0, -ENOENT for an MLID without members,
 * -EINVAL for a bad MLID. */
int imc_mtree_group_info(const struct imc_mtree *mt, uint16_t mlid,
			 struct imc_mtree_group_info *out);

struct imc_mtree_stats {
	uint32_t groups;            /* MLIDs with members */
	uint64_t members;           /* member ports, over all MLIDs */
	uint64_t tree_switches;     /* entries held, over all MLIDs */
	uint64_t adds, removes, clears, rebuilds, repairs;
	uint64_t add_entries;       /* entries changed by adds ... */
	uint64_t remove_entries;    /* ... removes and clears ... */
	uint64_t rebuild_entries;   /* ... and rebuilds and repairs */
	uint32_t max_add_entries;   /* most changed by one add */
	uint32_t max_remove_entries;
	uint64_t search_visits;     /* switches reached searching for trees */
};

void imc_mtree_stats(const struct imc_mtree *mt, struct imc_mtree_stats *out);

#ifdef __cplusplus
}
#endif
#endif

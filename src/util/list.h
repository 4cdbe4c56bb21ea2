/* The intrusive doubly linked list: a struct imc_list inside each entry,
 * the head a struct imc_list of its own, circular so that adding and
 * removing never test for the ends. An entry unlinked by imc_list_del
 * points at itself, so deleting it twice is harmless and
 * imc_list_linked tells whether it is on a list. */
#ifndef IMC_UTIL_LIST_H
#define IMC_UTIL_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "ibmcast/common.h" /* imc_container_of */

struct imc_list {
	struct imc_list *prev, *next;
};

static inline void imc_list_init(struct imc_list *h)
{
	h->prev = h->next = h;
}

static inline bool imc_list_empty(const struct imc_list *h)
{
	return h->next == h;
}

/* True while l is on a list (l initialized or deleted is not). */
static inline bool imc_list_linked(const struct imc_list *l)
{
	return l->next != l;
}

static inline void imc_list_add_tail(struct imc_list *h, struct imc_list *l)
{
	l->prev = h->prev;
	l->next = h;
	h->prev->next = l;
	h->prev = l;
}

static inline void imc_list_add_head(struct imc_list *h, struct imc_list *l)
{
	imc_list_add_tail(h->next, l);
}

static inline void imc_list_del(struct imc_list *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->prev = l->next = l;
}

/* Moves every entry of from, in order, to the tail of to. */
static inline void imc_list_splice(struct imc_list *to, struct imc_list *from)
{
	if (imc_list_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	imc_list_init(from);
}

#define imc_list_entry(l, type, member) imc_container_of(l, type, member)

/* Walks head's links in order; the body may delete (or free the entry
 * of) the link l it is given, since nx is read before the body runs. */
#define imc_list_foreach_safe(l, nx, head)                             \
	for ((l) = (head)->next, (nx) = (l)->next; (l) != (head);      \
	     (l) = (nx), (nx) = (l)->next)

#define imc_list_foreach(l, head) \
	for ((l) = (head)->next; (l) != (head); (l) = (l)->next)

#endif

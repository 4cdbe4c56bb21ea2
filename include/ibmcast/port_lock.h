/* One owner per port on a host: a lock file per port in the runtime
 * directory, held (flock, LOCK_EX) for as long as a process owns the
 * port's SA memberships: ibmcastd for each port it serves, or a
 * standalone `ibmcast join` when no daemon runs. The SA keeps one
 * membership per PortGID (IBA 15.2.5.17), so a second owner's Delete
 * would take bits away from the first: the second is refused instead.
 *
 * The file is RUN_DIR/port-<port GUID, 16 hex digits>-<port number>.lock
 * and holds "PID COMMAND" of its holder, for the refusal message. The
 * kernel drops the lock when the holder dies, however it dies.
 */
#ifndef IBMCAST_PORT_LOCK_H
#define IBMCAST_PORT_LOCK_H

#include <stddef.h>
#include <stdint.h>

struct imc_port_lock;

/* Takes the lock of port (guid, port_num) in run_dir (created, mode 0755,
 * when missing) for a holder named who. Returns 0 and *out; -EBUSY when
 * another process holds it (holder, when not NULL, gets "PID COMMAND" as
 * the file says, or "" when unreadable); another negative errno when the
 * directory or file cannot be made or opened. */
int imc_port_lock_take(const char *run_dir, uint64_t guid, unsigned port_num,
		       const char *who, struct imc_port_lock **out,
		       char *holder, size_t holder_len);

/* The lock file's path. */
const char *imc_port_lock_path(const struct imc_port_lock *l);

/* Releases the lock and removes the file. NULL is a no-op. */
void imc_port_lock_release(struct imc_port_lock *l);

#endif

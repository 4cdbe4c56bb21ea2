/* SA client on arbitrary MADs and arbitrary call sequences. The input is a
 * program of one-byte operations:
 *   0 M          start a query, method M % 5 (Get, Set, GetTable, Delete,
 *                GetMulti)
 *   1 K F L L .. deliver a MAD of 56 + LL % 201 bytes (zero padded); flag
 *                bits: 1 take query K's TID, 2 class SA, 4 response bit,
 *                8 as cut in transit (imc_sa_client_recv_cut)
 *   2 K          cancel query K
 *   3 T          let T * 7 ms of virtual time pass
 *   4            flush
 *   5-7          one loop round
 * Properties (abort when broken): no callback inside an API call; at most
 * one callback per query and none after cancel; answers stay inside their
 * buffers; every MAD sent is 256 bytes of class SA; at the end every query
 * neither cancelled nor completed completes once after a flush, and
 * nothing is left alive or armed. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/loop.h"
#include "ibmcast/sa_client.h"
#include "util/bytes.h"

#define MAXQ 64
#define MS IMC_NSEC_PER_MSEC

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct slot {
	struct imc_sa_query *q; /* NULL once completed or cancelled */
	int calls;
	bool canceled;
};

static struct slot slots[MAXQ];
static unsigned nslots;
static bool in_api;
static volatile uint8_t sink;

static void check(bool ok)
{
	if (!ok)
		abort();
}

static int fake_send(void *ctx, const uint8_t *mad, size_t len)
{
	check(len == IMC_MAD_SIZE);
	check(mad[1] == UMAD_CLASS_SUBN_ADM && mad[2] == 2);
	return 0;
}

static void on_done(void *arg, int err, const struct imc_sa_answer *a)
{
	struct slot *s = arg;

	check(!in_api);
	check(!s->canceled);
	check(++s->calls == 1);
	s->q = NULL;
	if (err) {
		check(a == NULL);
		check(err == -ETIMEDOUT || err == -ECANCELED ||
		      err == -ECONNABORTED || err == -EPROTO || err == -EFBIG);
		return;
	}
	check(a && a->mad && (a->method & 0x80));
	check(a->len <= 4096);
	if (a->rec_size && a->count > 1)
		check(a->count * a->rec_size <= a->len);
	for (size_t i = 0; i < a->len; i++)
		sink ^= a->data[i];
}

static uint8_t next(const uint8_t *data, size_t size, size_t *pos)
{
	return *pos < size ? data[(*pos)++] : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t methods[] = {
		UMAD_METHOD_GET, UMAD_METHOD_SET, UMAD_SA_METHOD_GET_TABLE,
		UMAD_SA_METHOD_DELETE, UMAD_SA_METHOD_GET_MULTI,
	};
	struct imc_sa_transport tr = { fake_send, NULL };
	struct imc_sa_client_config cfg;
	struct imc_sa_client_stats st;
	struct imc_sa_client *c;
	struct imc_loop *loop;
	size_t pos = 0;

	memset(slots, 0, sizeof(slots));
	nslots = 0;
	if (imc_loop_create_virtual(0, &loop) < 0)
		return 0;
	imc_sa_client_config_init(&cfg);
	cfg.timeout = 10 * MS;
	cfg.max_timeout = 40 * MS;
	cfg.retries = 2;
	cfg.window = 4;
	cfg.max_payload = 4096;
	check(imc_sa_client_create(loop, &tr, &cfg, &c) == 0);

	while (pos < size) {
		uint8_t op = next(data, size, &pos) & 7;
		struct imc_sa_mad m;
		uint8_t mad[IMC_MAD_SIZE];
		struct slot *s;
		unsigned k, flags;
		size_t len;

		switch (op) {
		case 0:
			memset(&m, 0, sizeof(m));
			m.mad.method = methods[next(data, size, &pos) % 5];
			m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
			if (nslots == MAXQ)
				break;
			s = &slots[nslots++];
			in_api = true;
			check(imc_sa_query_start(c, &m, on_done, s, &s->q) == 0);
			in_api = false;
			break;
		case 1:
			k = next(data, size, &pos);
			flags = next(data, size, &pos);
			len = next(data, size, &pos);
			len = IMC_SA_DATA_OFFSET +
			      (len << 8 | next(data, size, &pos)) % 201;
			memset(mad, 0, sizeof(mad));
			/* len <= sizeof(mad) already; the second bound is
			 * for gcc -O3, whose vectorised loop it cannot see. */
			for (size_t i = 0; i < len && i < sizeof(mad); i++)
				mad[i] = next(data, size, &pos);
			if ((flags & 1) && nslots && slots[k % nslots].q)
				imc_put32(mad + 12, (uint32_t)imc_sa_query_tid(
						  slots[k % nslots].q));
			if (flags & 2)
				mad[1] = UMAD_CLASS_SUBN_ADM;
			if (flags & 4)
				mad[3] |= 0x80;
			in_api = true;
			if (flags & 8)
				imc_sa_client_recv_cut(c, mad, len);
			else
				imc_sa_client_recv(c, mad, len);
			in_api = false;
			break;
		case 2:
			k = next(data, size, &pos);
			if (!nslots)
				break;
			s = &slots[k % nslots];
			if (!s->q)
				break;
			in_api = true;
			check(imc_sa_query_cancel(s->q) == 0);
			in_api = false;
			s->q = NULL;
			s->canceled = true;
			break;
		case 3:
			imc_loop_run_until(loop, imc_loop_now(loop) +
				next(data, size, &pos) * 7 * MS);
			break;
		case 4:
			in_api = true;
			imc_sa_client_flush(c);
			in_api = false;
			break;
		default:
			imc_loop_run_once(loop);
			break;
		}
	}

	/* Everything still pending ends, once. */
	imc_sa_client_flush(c);
	imc_loop_run(loop);
	for (unsigned i = 0; i < nslots; i++)
		check(slots[i].canceled ? slots[i].calls == 0 :
					  slots[i].calls == 1);
	imc_sa_client_get_stats(c, &st);
	check(st.alive == 0 && st.in_flight == 0 && st.queued == 0);
	check(st.started == nslots);
	check(st.max_in_flight <= cfg.window);
	imc_sa_client_destroy(c);
	check(imc_loop_destroy(loop) == 0);
	return 0;
}

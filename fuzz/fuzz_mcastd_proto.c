/* The ibmcastd protocol decoder (src/mcastd/proto.c) on arbitrary bytes:
 * a stream cut into frames as the daemon and the client cut it, each
 * frame decoded; a frame accepted encodes back to the same bytes (one
 * encoding per message), and nothing reads past the input. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "mcastd/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		struct mcd_msg m;
		uint8_t *copy, *again;
		int f = mcd_frame(data + off, size - off, MCD_MAX_FROM_DAEMON);

		if (f <= 0)
			break;
		/* An exact-size copy, so that a read past the frame is one
		 * past the allocation. */
		copy = malloc((size_t)f);
		if (!copy)
			return 0;
		memcpy(copy, data + off, (size_t)f);
		if (mcd_decode(&m, copy, (size_t)f) == 0) {
			struct imc_mcastd_show_member *ms = NULL;

			if (m.type == MCD_SHOW_CLIENT &&
			    m.u.show_client.cl.n_members) {
				ms = calloc(m.u.show_client.cl.n_members,
					    sizeof(*ms));
				if (!ms)
					abort();
				for (size_t i = 0;
				     i < m.u.show_client.cl.n_members; i++)
					mcd_show_member(&m, i, &ms[i]);
				m.u.show_client.cl.members = ms;
			}
			if (mcd_size(&m) != (size_t)f)
				abort();
			again = malloc((size_t)f);
			if (!again)
				abort();
			mcd_encode(&m, again);
			if (memcmp(again, copy, (size_t)f)) {
				for (int k = 0; k < f; k++)
					if (again[k] != copy[k])
						fprintf(stderr, "type %u off %d %02x %02x\n", m.type, k, copy[k], again[k]);
				abort();
			}
			free(again);
			free(ms);
		}
		free(copy);
		off += (size_t)f;
	}
	return 0;
}

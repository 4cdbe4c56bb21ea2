/* Classic pcap writer (the libpcap file format, nanosecond variant). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "ibmcast/pcap.h"

struct imc_pcap {
	FILE *f;
	bool owned;   /* opened by imc_pcap_open, so closed by us */
	int err;      /* first error; sticky */
	uint32_t snaplen;
	int64_t ts_offset_ns;
};

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static int put(struct imc_pcap *p, const void *buf, size_t len)
{
	if (p->err)
		return p->err;
	errno = 0;
	if (len && fwrite(buf, 1, len, p->f) != len)
		p->err = errno ? -errno : -EIO;
	return p->err;
}

static int open_stream(FILE *f, const struct imc_pcap_config *c,
		       struct imc_pcap **out)
{
	uint8_t hdr[IMC_PCAP_FILE_HDR_SIZE];
	struct imc_pcap *p;
	int rc;

	*out = NULL;
	if (!f || c->snaplen > IMC_PCAP_SNAPLEN)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->f = f;
	p->snaplen = c->snaplen ? c->snaplen : IMC_PCAP_SNAPLEN;
	p->ts_offset_ns = c->ts_offset_ns;
	put_le32(hdr, IMC_PCAP_MAGIC_NS);
	put_le16(hdr + 4, 2);           /* version 2.4 */
	put_le16(hdr + 6, 4);
	put_le32(hdr + 8, 0);           /* thiszone: UTC */
	put_le32(hdr + 12, 0);          /* sigfigs */
	put_le32(hdr + 16, p->snaplen);
	put_le32(hdr + 20, c->linktype);
	rc = put(p, hdr, sizeof(hdr));
	if (rc < 0) {
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int imc_pcap_open_stream(FILE *f, uint32_t linktype, struct imc_pcap **out)
{
	const struct imc_pcap_config c = { .linktype = linktype };

	return open_stream(f, &c, out);
}

int imc_pcap_open_config(const char *path, const struct imc_pcap_config *c,
			 struct imc_pcap **out)
{
	FILE *f;
	int rc;

	*out = NULL;
	if (c->snaplen > IMC_PCAP_SNAPLEN)
		return -EINVAL;
	f = fopen(path, "wb");
	if (!f)
		return -errno;
	rc = open_stream(f, c, out);
	if (rc < 0) {
		fclose(f);
		return rc;
	}
	(*out)->owned = true;
	return 0;
}

int imc_pcap_open(const char *path, struct imc_pcap **out)
{
	const struct imc_pcap_config c = {
		.linktype = IMC_PCAP_LINKTYPE_USER0,
	};

	return imc_pcap_open_config(path, &c, out);
}

int imc_pcap_write(struct imc_pcap *p, uint64_t ts_ns, const uint8_t *frame,
		   size_t len)
{
	uint8_t rec[IMC_PCAP_REC_HDR_SIZE];
	size_t keep = len < p->snaplen ? len : p->snaplen;
	uint64_t sec;

	if (!frame && len)
		return -EINVAL;
	if (len > IMC_PCAP_SNAPLEN)
		return -EMSGSIZE;
	/* The offset moves the clock without wrapping it. */
	if (p->ts_offset_ns < 0 &&
	    ts_ns < (uint64_t)-(p->ts_offset_ns + 1) + 1)
		return -ERANGE;
	if (p->ts_offset_ns > 0 &&
	    ts_ns > UINT64_MAX - (uint64_t)p->ts_offset_ns)
		return -ERANGE;
	ts_ns += (uint64_t)p->ts_offset_ns;
	sec = ts_ns / 1000000000u;
	if (sec > UINT32_MAX)
		return -ERANGE;
	put_le32(rec, (uint32_t)sec);
	put_le32(rec + 4, (uint32_t)(ts_ns % 1000000000u));
	put_le32(rec + 8, (uint32_t)keep); /* captured */
	put_le32(rec + 12, (uint32_t)len); /* on the wire */
	if (put(p, rec, sizeof(rec)) < 0)
		return p->err;
	return put(p, frame, keep);
}

int imc_pcap_close(struct imc_pcap *p)
{
	int rc;

	if (!p)
		return 0;
	rc = p->err;
	errno = 0;
	if (fflush(p->f) != 0 && !rc)
		rc = errno ? -errno : -EIO;
	errno = 0;
	if (p->owned && fclose(p->f) != 0 && !rc)
		rc = errno ? -errno : -EIO;
	free(p);
	return rc;
}

/* Writing InfiniBand packets to a classic pcap file.
 *
 * Format: the original libpcap file format with nanosecond timestamps
 * (magic 0xA1B23C4D), version 2.4, written little-endian whatever the
 * host. Each record is one whole packet, LRH through VCRC.
 *
 * Link type: DLT_USER0 (147) by default, because tshark 4.0 does not
 * dissect LINKTYPE_INFINIBAND (247) from pcap files; read such files with
 *   tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
 */
#ifndef IBMCAST_PCAP_H
#define IBMCAST_PCAP_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMC_PCAP_MAGIC_NS 0xa1b23c4du
#define IMC_PCAP_LINKTYPE_USER0 147u
#define IMC_PCAP_LINKTYPE_INFINIBAND 247u
#define IMC_PCAP_SNAPLEN 65535u
#define IMC_PCAP_FILE_HDR_SIZE 24
#define IMC_PCAP_REC_HDR_SIZE 16

struct imc_pcap;

/* Creates (or truncates) path and writes the file header, link type
 * DLT_USER0. The returned writer is freed by imc_pcap_close. Errors:
 * negative errno of the failed open or write. */
int imc_pcap_open(const char *path, struct imc_pcap **out);

/* A capture's options. linktype as above; snaplen: the bytes kept of
 * each packet, 1..IMC_PCAP_SNAPLEN (0: IMC_PCAP_SNAPLEN), a longer
 * packet's record keeping its length on the wire; ts_offset_ns: added to
 * every timestamp given (e.g. CLOCK_REALTIME - CLOCK_MONOTONIC, to write
 * wall-clock times from a real-time loop's clock). */
struct imc_pcap_config {
	uint32_t linktype;
	uint32_t snaplen;
	int64_t ts_offset_ns;
};

/* As imc_pcap_open with the options of c. -EINVAL for a snaplen above
 * IMC_PCAP_SNAPLEN. */
int imc_pcap_open_config(const char *path, const struct imc_pcap_config *c,
			 struct imc_pcap **out);

/* Same on a stream the caller opened (a file, or open_memstream() for a
 * capture in memory), with the given link type. imc_pcap_close flushes
 * the stream but does not close it; the caller does. */
int imc_pcap_open_stream(FILE *f, uint32_t linktype, struct imc_pcap **out);

/* Appends one packet of len bytes captured at ts_ns nanoseconds since the
 * epoch (after the offset of the configuration), its first snaplen bytes.
 * Errors: -EINVAL (frame NULL with a length), -EMSGSIZE (len above
 * IMC_PCAP_SNAPLEN), -ERANGE (time before 1970 or past 2106), -EIO or the
 * write's errno.
 * After a write error every later write fails too. */
int imc_pcap_write(struct imc_pcap *p, uint64_t ts_ns, const uint8_t *frame,
		   size_t len);

/* Flushes, closes the file if imc_pcap_open opened it, and frees p (also
 * on error; NULL is a no-op). Returns 0, or the first write, flush or
 * close error seen. */
int imc_pcap_close(struct imc_pcap *p);

#ifdef __cplusplus
}
#endif
#endif

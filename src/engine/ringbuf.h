/*
 * ringbuf.h - reading PERF_RECORD_SAMPLEs out of a perf_event ring buffer.
 *
 * The kernel appends records to the data pages of an event's mmap and moves
 * data_head; the reader consumes them by moving data_tail. The PMU sampler
 * reads its buffer inside the SIGTRAP handler, so everything here is
 * signal-safe: no malloc, no locks, no stdio. The parser is a pure function
 * over bytes, so tests feed it synthetic records.
 */
#ifndef WASP_RINGBUF_H
#define WASP_RINGBUF_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* The sample fields the parser understands: all one u64 word each. A
 * sample_type with any other bit (READ, CALLCHAIN, RAW, BRANCH_STACK, REGS_*,
 * STACK_USER, AUX: variable-sized) is refused before an event is opened. */
#define RINGBUF_SAMPLE_TYPES                                                              \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |       \
     PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |         \
     PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT |                \
     PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR |             \
     PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE)

typedef struct ringbuf_sample {
    uint64_t ip;         /* PERF_SAMPLE_IP */
    uint64_t addr;       /* PERF_SAMPLE_ADDR: data address, 0 when the PMU had none */
    uint64_t time, period, weight, data_src, phys_addr;
    uint32_t pid, tid, cpu;
    uint16_t misc;       /* header misc: PERF_RECORD_MISC_CPUMODE_MASK, _EXACT_IP */
} ringbuf_sample;

typedef struct ringbuf_scan {
    uint32_t samples;    /* well-formed PERF_RECORD_SAMPLEs read */
    uint32_t malformed;  /* sample records too short for their sample_type */
    uint32_t other;      /* records of other types, skipped by their size */
    uint64_t lost;       /* samples the kernel said it could not write */
    int corrupt;         /* a header made no sense: the rest was discarded */
    int have_sample;     /* newest is valid */
    ringbuf_sample newest;
} ringbuf_scan;

/* 1 when every bit of sample_type is one the parser understands. */
int ringbuf_sample_type_ok(uint64_t sample_type);

/* Pure. Parses the body of one PERF_RECORD_SAMPLE (rec points at its
 * header, len bytes of it are present) laid out for sample_type. Returns 0,
 * or -1 when len is too short. */
int ringbuf_parse_sample(const uint8_t *rec, size_t len, uint64_t sample_type, ringbuf_sample *out);

/* Pure. Walks the records between the free-running byte offsets tail and
 * head in data[0, size) (size a power of two; records may wrap around its
 * end), keeps the newest sample and counts the rest into *scan. Returns the
 * offset the reader publishes as data_tail: head, also when the buffer
 * turned out corrupt (its contents cannot be trusted past the bad header). */
uint64_t ringbuf_scan_records(const uint8_t *data, uint64_t size, uint64_t tail, uint64_t head,
                              uint64_t sample_type, ringbuf_scan *scan);

/* Signal-safe. Consumes everything the kernel has published in a mapped
 * buffer: meta is the first page of the mapping, data its size bytes of
 * data pages. Reads data_head with acquire and writes data_tail with release
 * ordering, so the kernel never overwrites a record still being read. */
void ringbuf_consume(struct perf_event_mmap_page *meta, const uint8_t *data, uint64_t size,
                     uint64_t sample_type, ringbuf_scan *scan);

#endif

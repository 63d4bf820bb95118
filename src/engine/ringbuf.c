/*
 * ringbuf.c - the perf_event ring-buffer reader of the PMU sampler.
 *
 * Runs in signal context: no malloc, no locks, no stdio. Never trusts the
 * buffer: a header that is too small, misaligned or runs past data_head
 * stops the walk (the kernel only publishes whole, 8-byte aligned records,
 * so such a header means the buffer is not what we think it is).
 */
#include "ringbuf.h"

#include <string.h>

/* Longest sample record we read: header + one word per understood field. */
#define RINGBUF_MAX_SAMPLE (8 * 18)

int ringbuf_sample_type_ok(uint64_t sample_type)
{
    return (sample_type & ~(uint64_t)RINGBUF_SAMPLE_TYPES) == 0;
}

static uint64_t ringbuf_word(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

int ringbuf_parse_sample(const uint8_t *rec, size_t len, uint64_t sample_type, ringbuf_sample *out)
{
    /* The record layout of include/uapi/linux/perf_event.h, in its order,
     * restricted to the one-word fields RINGBUF_SAMPLE_TYPES admits. */
    static const uint64_t order[] = {
        PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
        PERF_SAMPLE_ADDR, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
        PERF_SAMPLE_PERIOD, PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT,
        PERF_SAMPLE_DATA_SRC, PERF_SAMPLE_TRANSACTION, PERF_SAMPLE_PHYS_ADDR,
        PERF_SAMPLE_CGROUP, PERF_SAMPLE_DATA_PAGE_SIZE, PERF_SAMPLE_CODE_PAGE_SIZE,
    };
    struct perf_event_header h;
    size_t off = sizeof(h);

    if (!ringbuf_sample_type_ok(sample_type) || len < sizeof(h))
        return -1;
    memcpy(&h, rec, sizeof(h));
    memset(out, 0, sizeof(*out));
    out->misc = h.misc;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        if (!(sample_type & order[i]))
            continue;
        if (off + 8 > len)
            return -1;
        uint64_t w = ringbuf_word(rec + off);
        off += 8;
        switch (order[i]) {
        case PERF_SAMPLE_IP: out->ip = w; break;
        case PERF_SAMPLE_TID: out->pid = (uint32_t)w; out->tid = (uint32_t)(w >> 32); break;
        case PERF_SAMPLE_TIME: out->time = w; break;
        case PERF_SAMPLE_ADDR: out->addr = w; break;
        case PERF_SAMPLE_CPU: out->cpu = (uint32_t)w; break;
        case PERF_SAMPLE_PERIOD: out->period = w; break;
        case PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT: out->weight = w; break;
        case PERF_SAMPLE_DATA_SRC: out->data_src = w; break;
        case PERF_SAMPLE_PHYS_ADDR: out->phys_addr = w; break;
        default: break;
        }
    }
    return 0;
}

/* Copies n bytes starting at free-running offset pos out of the ring. */
static void ringbuf_copy(const uint8_t *data, uint64_t size, uint64_t pos, void *dst, size_t n)
{
    uint64_t at = pos & (size - 1);
    size_t first = size - at < n ? (size_t)(size - at) : n;
    memcpy(dst, data + at, first);
    memcpy((uint8_t *)dst + first, data, n - first);
}

static void ringbuf_record(const uint8_t *data, uint64_t size, uint64_t pos,
                           const struct perf_event_header *h, uint64_t sample_type, ringbuf_scan *scan)
{
    uint8_t rec[RINGBUF_MAX_SAMPLE];
    size_t n = h->size < sizeof(rec) ? h->size : sizeof(rec);
    ringbuf_sample s;

    switch (h->type) {
    case PERF_RECORD_SAMPLE:
        ringbuf_copy(data, size, pos, rec, n);
        if (ringbuf_parse_sample(rec, n, sample_type, &s) == 0) {
            scan->newest = s;
            scan->samples++;
            scan->have_sample = 1;
        } else {
            scan->malformed++;
        }
        break;
    case PERF_RECORD_LOST:           /* { header; u64 id; u64 lost; } */
        if (h->size >= 24) {
            ringbuf_copy(data, size, pos, rec, 24);
            scan->lost += ringbuf_word(rec + 16);
        }
        break;
    case PERF_RECORD_LOST_SAMPLES:   /* { header; u64 lost; } */
        if (h->size >= 16) {
            ringbuf_copy(data, size, pos, rec, 16);
            scan->lost += ringbuf_word(rec + 8);
        }
        break;
    default:
        scan->other++;
        break;
    }
}

uint64_t ringbuf_scan_records(const uint8_t *data, uint64_t size, uint64_t tail, uint64_t head,
                              uint64_t sample_type, ringbuf_scan *scan)
{
    memset(scan, 0, sizeof(*scan));
    if (size == 0 || (size & (size - 1)) || head - tail > size) {
        scan->corrupt = 1;
        return head;
    }
    for (uint64_t pos = tail; pos != head;) {
        struct perf_event_header h;
        if (head - pos < sizeof(h)) {
            scan->corrupt = 1;
            break;
        }
        ringbuf_copy(data, size, pos, &h, sizeof(h));
        if (h.size < sizeof(h) || (h.size & 7) || h.size > head - pos) {
            scan->corrupt = 1;
            break;
        }
        ringbuf_record(data, size, pos, &h, sample_type, scan);
        pos += h.size;
    }
    return head;
}

void ringbuf_consume(struct perf_event_mmap_page *meta, const uint8_t *data, uint64_t size,
                     uint64_t sample_type, ringbuf_scan *scan)
{
    /* Acquire pairs with the kernel's store of data_head after the records
     * (the rmb() of perf_event_open(2)); release makes our reads of the
     * records happen before the kernel may reuse their space. */
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);
    uint64_t next = ringbuf_scan_records(data, size, tail, head, sample_type, scan);
    __atomic_store_n(&meta->data_tail, next, __ATOMIC_RELEASE);
}

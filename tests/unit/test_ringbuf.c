/*
 * test_ringbuf.c - the PMU sampler's ring-buffer reader against synthetic
 * records laid out as the kernel writes them (include/uapi/linux/perf_event.h).
 */
#include <stdlib.h>
#include "harness.h"
#include "ringbuf.h"

#define RING 256   /* data area: a power of two, small enough to wrap often */
#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR)
#define USER_EXACT (PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP)

static uint8_t ring[RING];

/* Writes n bytes at free-running offset pos, wrapping like the kernel. */
static void put(uint64_t pos, const void *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ring[(pos + i) & (RING - 1)] = ((const uint8_t *)src)[i];
}

static uint64_t put_record(uint64_t pos, uint32_t type, uint16_t misc, const uint64_t *words, int nwords)
{
    struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)(8 + 8 * nwords) };
    put(pos, &h, sizeof(h));
    put(pos + 8, words, 8 * (size_t)nwords);
    return pos + h.size;
}

static uint64_t put_sample(uint64_t pos, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t addr)
{
    uint64_t w[3] = { ip, (uint64_t)pid | (uint64_t)tid << 32, addr };
    return put_record(pos, PERF_RECORD_SAMPLE, USER_EXACT, w, 3);
}

TEST(one_sample_gives_ip_tid_and_address)
{
    ringbuf_scan s;
    uint64_t head = put_sample(0, 0x401000, 10, 11, 0x7ffd0008);
    CHECK_EQ_U(ringbuf_scan_records(ring, RING, 0, head, ST, &s), head);
    CHECK_EQ_U(s.samples, 1);
    CHECK(s.have_sample && !s.corrupt);
    CHECK_EQ_U(s.newest.ip, 0x401000);
    CHECK_EQ_U(s.newest.pid, 10);
    CHECK_EQ_U(s.newest.tid, 11);
    CHECK_EQ_U(s.newest.addr, 0x7ffd0008);
    CHECK_EQ_U(s.newest.misc, USER_EXACT);
}

TEST(the_newest_of_several_samples_is_kept)
{
    ringbuf_scan s;
    uint64_t pos = 64;
    for (int i = 0; i < 4; i++)
        pos = put_sample(pos, 0x1000 + (uint64_t)i, 1, 1, 0x5000 + 8 * (uint64_t)i);
    ringbuf_scan_records(ring, RING, 64, pos, ST, &s);
    CHECK_EQ_U(s.samples, 4);
    CHECK_EQ_U(s.newest.ip, 0x1003);
    CHECK_EQ_U(s.newest.addr, 0x5018);
}

TEST(an_empty_buffer_has_no_sample)
{
    ringbuf_scan s;
    CHECK_EQ_U(ringbuf_scan_records(ring, RING, 96, 96, ST, &s), 96);
    CHECK(!s.have_sample && !s.corrupt && s.samples == 0);
}

TEST(records_that_wrap_around_the_end_are_reassembled)
{
    ringbuf_scan s;
    /* Header in the last 8 bytes, body at the start; then one split inside
     * its body; offsets are free-running, many laps in. */
    uint64_t lap = 1000 * (uint64_t)RING;
    uint64_t tail = lap + RING - 8;
    uint64_t head = put_sample(tail, 0xaaaa, 2, 3, 0xbbbb);
    CHECK_EQ_U(ringbuf_scan_records(ring, RING, tail, head, ST, &s), head);
    CHECK(s.have_sample && !s.corrupt);
    CHECK_EQ_U(s.newest.ip, 0xaaaa);
    CHECK_EQ_U(s.newest.addr, 0xbbbb);

    tail = lap + RING - 16;
    head = put_sample(tail, 0xcccc, 2, 3, 0xdddd);
    ringbuf_scan_records(ring, RING, tail, head, ST, &s);
    CHECK(s.have_sample && !s.corrupt);
    CHECK_EQ_U(s.newest.ip, 0xcccc);
    CHECK_EQ_U(s.newest.tid, 3);
    CHECK_EQ_U(s.newest.addr, 0xdddd);
}

TEST(lost_records_are_counted)
{
    ringbuf_scan s;
    uint64_t lost[2] = { 77, 5 };       /* PERF_RECORD_LOST: id, lost */
    uint64_t lost_samples[1] = { 2 };   /* PERF_RECORD_LOST_SAMPLES: lost */
    uint64_t pos = put_record(0, PERF_RECORD_LOST, 0, lost, 2);
    pos = put_record(pos, PERF_RECORD_LOST_SAMPLES, 0, lost_samples, 1);
    pos = put_sample(pos, 0x1234, 1, 1, 0x9990);
    ringbuf_scan_records(ring, RING, 0, pos, ST, &s);
    CHECK_EQ_U(s.lost, 7);
    CHECK_EQ_U(s.samples, 1);
    CHECK_EQ_U(s.newest.addr, 0x9990);
}

TEST(unknown_record_types_are_skipped_by_their_size)
{
    ringbuf_scan s;
    uint64_t junk[4] = { ~0ULL, ~0ULL, ~0ULL, ~0ULL };
    uint64_t pos = put_sample(0, 0x10, 1, 1, 0x20);
    pos = put_record(pos, 99, 0, junk, 4);
    pos = put_record(pos, PERF_RECORD_THROTTLE, 0, junk, 3);
    pos = put_sample(pos, 0x30, 1, 1, 0x40);
    CHECK_EQ_U(ringbuf_scan_records(ring, RING, 0, pos, ST, &s), pos);
    CHECK_EQ_U(s.other, 2);
    CHECK_EQ_U(s.samples, 2);
    CHECK(!s.corrupt);
    CHECK_EQ_U(s.newest.ip, 0x30);
}

TEST(a_record_cut_off_by_head_marks_the_buffer_corrupt)
{
    ringbuf_scan s;
    uint64_t pos = put_sample(0, 0x10, 1, 1, 0x20);
    uint64_t end = put_sample(pos, 0x30, 1, 1, 0x40);
    /* head inside the second record: everything is consumed, the good
     * sample before it survives, nothing is read past head. */
    CHECK_EQ_U(ringbuf_scan_records(ring, RING, 0, end - 8, ST, &s), end - 8);
    CHECK(s.corrupt);
    CHECK_EQ_U(s.samples, 1);
    CHECK_EQ_U(s.newest.ip, 0x10);
    /* head inside a header */
    ringbuf_scan_records(ring, RING, 0, pos + 4, ST, &s);
    CHECK(s.corrupt);
    CHECK_EQ_U(s.newest.ip, 0x10);
}

TEST(garbage_headers_stop_the_walk)
{
    static const uint16_t bad_sizes[] = { 0, 4, 12, 200 };
    ringbuf_scan s;
    for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = 0, .size = bad_sizes[i] };
        uint64_t pos = put_sample(0, 0x10, 1, 1, 0x20);
        put(pos, &h, sizeof(h));
        uint64_t head = pos + 64;   /* size 0 must not loop, 200 runs past head */
        CHECK_EQ_U(ringbuf_scan_records(ring, RING, 0, head, ST, &s), head);
        CHECK(s.corrupt);
        CHECK_EQ_U(s.samples, 1);
        CHECK_EQ_U(s.newest.ip, 0x10);
    }
    /* More published than the buffer holds, or a size that is no power of two. */
    ringbuf_scan_records(ring, RING, 0, RING + 8, ST, &s);
    CHECK(s.corrupt && !s.have_sample);
    ringbuf_scan_records(ring, 200, 0, 32, ST, &s);
    CHECK(s.corrupt && !s.have_sample);
}

TEST(a_sample_too_short_for_its_type_is_malformed)
{
    ringbuf_scan s;
    uint64_t ip_only[1] = { 0x99 };
    uint64_t pos = put_sample(0, 0x10, 1, 1, 0x20);
    pos = put_record(pos, PERF_RECORD_SAMPLE, USER_EXACT, ip_only, 1);
    ringbuf_scan_records(ring, RING, 0, pos, ST, &s);
    CHECK_EQ_U(s.malformed, 1);
    CHECK_EQ_U(s.samples, 1);
    CHECK(!s.corrupt);
    CHECK_EQ_U(s.newest.ip, 0x10);   /* not overwritten by the broken one */
    CHECK_EQ_U(s.newest.addr, 0x20);
}

TEST(every_one_word_field_is_found_in_kernel_order)
{
    uint64_t type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                    PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR;
    uint64_t w[11] = { 0x1d, 0x401234, 5 | (uint64_t)6 << 32, 777, 0xfeed0, 0x2d, 3, 20000, 41,
                       0x68100142, 0x1230 };
    uint8_t rec[8 + sizeof(w)];
    struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = USER_EXACT, .size = sizeof(rec) };
    ringbuf_sample s;
    memcpy(rec, &h, 8);
    memcpy(rec + 8, w, sizeof(w));
    CHECK(ringbuf_parse_sample(rec, sizeof(rec), type, &s) == 0);
    CHECK_EQ_U(s.ip, 0x401234);
    CHECK_EQ_U(s.pid, 5);
    CHECK_EQ_U(s.tid, 6);
    CHECK_EQ_U(s.time, 777);
    CHECK_EQ_U(s.addr, 0xfeed0);
    CHECK_EQ_U(s.cpu, 3);
    CHECK_EQ_U(s.period, 20000);
    CHECK_EQ_U(s.weight, 41);
    CHECK_EQ_U(s.data_src, 0x68100142);
    CHECK_EQ_U(s.phys_addr, 0x1230);
    CHECK(ringbuf_parse_sample(rec, sizeof(rec) - 8, type, &s) < 0);
}

TEST(variable_sized_fields_are_refused)
{
    CHECK(ringbuf_sample_type_ok(ST | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT_STRUCT));
    CHECK(!ringbuf_sample_type_ok(ST | PERF_SAMPLE_CALLCHAIN));
    CHECK(!ringbuf_sample_type_ok(ST | PERF_SAMPLE_RAW));
    CHECK(!ringbuf_sample_type_ok(ST | PERF_SAMPLE_REGS_USER));
    uint8_t rec[64] = { 0 };
    ringbuf_sample s;
    CHECK(ringbuf_parse_sample(rec, sizeof(rec), ST | PERF_SAMPLE_READ, &s) < 0);
}

TEST(consume_moves_data_tail_to_data_head)
{
    /* The mapping as the kernel lays it out: one meta page, then data. */
    uint8_t *map = aligned_alloc(4096, 4096 + RING);
    struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)map;
    uint8_t *data = map + 4096;
    ringbuf_scan s;
    memset(map, 0, 4096 + RING);
    memcpy(ring, data, RING);
    uint64_t head = put_sample(200, 0x77, 4, 4, 0x88);   /* wraps */
    memcpy(data, ring, RING);
    meta->data_tail = 200;
    meta->data_head = head;
    ringbuf_consume(meta, data, RING, ST, &s);
    CHECK(s.have_sample);
    CHECK_EQ_U(s.newest.addr, 0x88);
    CHECK_EQ_U(meta->data_tail, head);
    ringbuf_consume(meta, data, RING, ST, &s);   /* nothing new */
    CHECK(!s.have_sample && !s.corrupt);
    CHECK_EQ_U(meta->data_tail, head);
    free(map);
}

int main(void)
{
    RUN(one_sample_gives_ip_tid_and_address);
    RUN(the_newest_of_several_samples_is_kept);
    RUN(an_empty_buffer_has_no_sample);
    RUN(records_that_wrap_around_the_end_are_reassembled);
    RUN(lost_records_are_counted);
    RUN(unknown_record_types_are_skipped_by_their_size);
    RUN(a_record_cut_off_by_head_marks_the_buffer_corrupt);
    RUN(garbage_headers_stop_the_walk);
    RUN(a_sample_too_short_for_its_type_is_malformed);
    RUN(every_one_word_field_is_found_in_kernel_order);
    RUN(variable_sized_fields_are_refused);
    RUN(consume_moves_data_tail_to_data_head);
    return HARNESS_EXIT();
}

/*
 * test_num.c - the one number parser: exact, and every overflow refused.
 */
#include "harness.h"
#include "num.h"

TEST(u64_takes_the_whole_range_and_nothing_else)
{
    uint64_t v;
    CHECK(num_parse_u64("0", &v) == NUM_OK && v == 0);
    CHECK(num_parse_u64("18446744073709551615", &v) == NUM_OK && v == UINT64_MAX);
    CHECK(num_parse_u64("18446744073709551605", &v) == NUM_OK && v == UINT64_MAX - 10);
    CHECK(num_parse_u64("18446744073709551616", &v) == NUM_RANGE);
    CHECK(num_parse_u64("99999999999999999999999", &v) == NUM_RANGE);
    CHECK(num_parse_u64("", &v) == NUM_MALFORMED);
    CHECK(num_parse_u64("-1", &v) == NUM_MALFORMED);
    CHECK(num_parse_u64("+1", &v) == NUM_MALFORMED);
    CHECK(num_parse_u64(" 1", &v) == NUM_MALFORMED);
    CHECK(num_parse_u64("1 ", &v) == NUM_MALFORMED);
    CHECK(num_parse_u64("nan", &v) == NUM_MALFORMED);
    CHECK(num_parse_u64("0x10", &v) == NUM_MALFORMED);
    CHECK(num_parse_u64("99999999999999999999x", &v) == NUM_MALFORMED);
}

TEST(scaled_is_exact)
{
    static const num_unit u[] = { { "", 1 }, { "k", 1000 }, { "s", 1000000000 } };
    uint64_t v;
    CHECK(num_parse_scaled("1.5k", u, 3, &v) == NUM_OK && v == 1500);
    CHECK(num_parse_scaled("0.000000001s", u, 3, &v) == NUM_OK && v == 1);
    CHECK(num_parse_scaled("0.0000000001s", u, 3, &v) == NUM_MALFORMED);
    CHECK(num_parse_scaled("1.5", u, 3, &v) == NUM_MALFORMED);
    CHECK(num_parse_scaled("18446744073709551615", u, 3, &v) == NUM_OK && v == UINT64_MAX);
    CHECK(num_parse_scaled("18446744073709551616", u, 3, &v) == NUM_RANGE);
    CHECK(num_parse_scaled("18446744073709552k", u, 3, &v) == NUM_RANGE);
    CHECK(num_parse_scaled("18446744073.709551616s", u, 3, &v) == NUM_RANGE);
    CHECK(num_parse_scaled("1.", u, 3, &v) == NUM_MALFORMED);
    CHECK(num_parse_scaled(".", u, 3, &v) == NUM_MALFORMED);
    CHECK(num_parse_scaled("k", u, 3, &v) == NUM_MALFORMED);
    CHECK(num_parse_scaled("1m", u, 3, &v) == NUM_MALFORMED);
    CHECK(num_parse_scaled("0.00000000000000000000000001k", u, 3, &v) == NUM_MALFORMED);
}

int main(void)
{
    RUN(u64_takes_the_whole_range_and_nothing_else);
    RUN(scaled_is_exact);
    return HARNESS_EXIT();
}

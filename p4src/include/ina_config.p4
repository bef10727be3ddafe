/* ina_config.p4: compile-time parameters of switchml.p4 and the macros that repeat a
 * statement once per payload element.
 *
 *   -D INA_NUM_ELEMS=N   int32 elements per packet, N in {16, 32, 64, 128} (default 64)
 *   -D INA_POOL_SIZE=S   aggregation slots, 1..32768 (default 256); each slot has 2 sets
 *   -D INA_MAX_WORKERS=W workers per job, W in {32, 64, 128, 256, 512} (default 32): the width of the
 *                        per-(slot, set) worker bitmap (ina_bitmap_t); with W > 255 a job's worker count
 *                        and the countdown are 16-bit, else 8-bit (ina_count_t)
 *
 * INA_FOREACH_ELEM(M) expands to M(0) M(1) ... M(N-1); M pastes the index into field
 * names (d##i), so the program names payload fields d0..d{N-1}.
 */
#ifndef INA_CONFIG_P4
#define INA_CONFIG_P4

#ifndef INA_NUM_ELEMS
#define INA_NUM_ELEMS 64
#endif

#ifndef INA_POOL_SIZE
#define INA_POOL_SIZE 256
#endif

#if INA_POOL_SIZE < 1 || INA_POOL_SIZE > 32768
#error "INA_POOL_SIZE must be between 1 and 32768 (the slot field of pool_index has 15 bits)"
#endif

#ifndef INA_MAX_WORKERS
#define INA_MAX_WORKERS 32
#endif

#if INA_MAX_WORKERS == 32 || INA_MAX_WORKERS == 64 || INA_MAX_WORKERS == 128
#define INA_COUNT_BITS 8
#elif INA_MAX_WORKERS == 256 || INA_MAX_WORKERS == 512
#define INA_COUNT_BITS 16
#else
#error "INA_MAX_WORKERS must be one of 32, 64, 128, 256, 512"
#endif

/* One bit per rank 0..INA_MAX_WORKERS-1; a count of workers 1..INA_MAX_WORKERS (num_workers, countdown). */
typedef bit<INA_MAX_WORKERS> ina_bitmap_t;
typedef bit<INA_COUNT_BITS>  ina_count_t;

/* INA_WORKER_BIT(rank): 1 << rank as an ina_bitmap_t, for the bit<16> rank of ina_set_worker. p4c-bm2-ss limits a
 * run-time shift amount to 8 bits (bit<8>, or a constant up to 256), so for ranks up to 511 (W = 512) it shifts by
 * rank[8:1] twice, then by rank[0:0]. (switchml.p4 spells the W = 32 case out as it always had it, so that the
 * default build's JSON stays as it was, source lines included.) */
#if INA_MAX_WORKERS == 32
#define INA_WORKER_BIT(rank) 32w1 << (bit<8>)rank
#elif INA_MAX_WORKERS <= 256
#define INA_WORKER_BIT(rank) (ina_bitmap_t)1 << (bit<8>)rank
#else
#define INA_WORKER_BIT(rank) (ina_bitmap_t)1 << rank[8:1] << rank[8:1] << (bit<8>)rank[0:0]
#endif

#include "repeat.p4"

#if INA_NUM_ELEMS == 16
#define INA_FOREACH_ELEM(M) INA_REPEAT_16(M)
#elif INA_NUM_ELEMS == 32
#define INA_FOREACH_ELEM(M) INA_REPEAT_32(M)
#elif INA_NUM_ELEMS == 64
#define INA_FOREACH_ELEM(M) INA_REPEAT_64(M)
#elif INA_NUM_ELEMS == 128
#define INA_FOREACH_ELEM(M) INA_REPEAT_128(M)
#else
#error "INA_NUM_ELEMS must be one of 16, 32, 64, 128"
#endif

/* Register sizes: index of (slot, set) = slot * 2 + set; element i of it = index * N + i. */
#define INA_SLOT_REGS    (INA_POOL_SIZE * 2)
#define INA_VALUE_REGS   (INA_POOL_SIZE * 2 * INA_NUM_ELEMS)

/* Per-job counters are indexed by job_id (0..255); index 256 collects packets that carry no
 * readable job id (non-INA traffic, INA header truncated). */
#define INA_MAX_JOBS     256
#define INA_NO_JOB       256
#define INA_COUNTER_SIZE 257

#endif

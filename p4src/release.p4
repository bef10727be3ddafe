/* release.p4: straggler-tolerant aggregation (Trio, Serene and Canary release a partial aggregate when a worker
 * lags): esa.p4 with a per-job timeout after which the switch releases a partial aggregate to its job's PS.
 *
 * A first contribution sets its aggregator's deadline (now + its job's timeout, from atp_set_job; 0: never). A
 * first-level packet of another (job, seq) that finds the deadline passed releases the partial aggregate as esa.p4
 * evicts one: the packet's values become its own aggregate there, and it leaves carrying the released partial (job,
 * seq, bitmaps, flags | COLLISION) to that job's PS (esa_servers), which completes it exactly once by its bitmaps
 * when the late contributions reach it. Those collide with the new owner, or, once the aggregator is free again,
 * are sent on by the evicted (job, seq) the aggregator remembers until the PS's ACK for it passes. v1model has no
 * timer: nothing is released until a packet finds the deadline passed (Trio's timer threads have no counterpart).
 * Preemption by priority and release at completion are esa.p4's; release.p4's controller gives every job the same
 * priority unless told otherwise, so only the timeout evicts. A passed deadline releases whatever the priorities (a
 * lower-priority job's packet may take an overdue higher-priority partial), and atp_expired counts every eviction
 * that found the deadline passed, also one that the priorities alone would have made.
 *
 * Control plane: as esa.p4, with
 *   AtpIngress.atp_jobs     action atp_set_job(bit<2> level, bit<16> mgid, bit<8> rack, bit<8> priority,
 *                                              bit<32> timeout)   timeout in microseconds (0: never released)
 *   Registers: atp_deadline (bit<48>, per aggregator, in ingress_global_timestamp's microseconds; 0: none).
 *   Counters: AtpIngress.atp_expired (index = the victim's job id): partial aggregates released past their deadline
 *   (each also counts in atp_evicted).
 *
 * Build: p4c-bm2-ss [-D ATP_NUM_ELEMS=32] [-D ATP_NUM_AGTR=4096] [-D ATP_L2_SIZE=1024] release.p4
 */
#define ATP_ESA 1
#define ATP_RELEASE 1
#define atp_h release_h
#include "atp.p4"

/* ina_config.p4: compile-time parameters of switchml.p4 and the macros that repeat a
 * statement once per payload element.
 *
 *   -D INA_NUM_ELEMS=N   int32 elements per packet, N in {16, 32, 64, 128} (default 64)
 *   -D INA_POOL_SIZE=S   aggregation slots, 1..32768 (default 256); each slot has 2 sets
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

#define INA_REPEAT_16(M) \
    M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define INA_REPEAT_32(M) INA_REPEAT_16(M) \
    M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) M(28) M(29) M(30) M(31)
#define INA_REPEAT_64(M) INA_REPEAT_32(M) \
    M(32) M(33) M(34) M(35) M(36) M(37) M(38) M(39) M(40) M(41) M(42) M(43) M(44) M(45) M(46) M(47) \
    M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55) M(56) M(57) M(58) M(59) M(60) M(61) M(62) M(63)
#define INA_REPEAT_128(M) INA_REPEAT_64(M) \
    M(64) M(65) M(66) M(67) M(68) M(69) M(70) M(71) M(72) M(73) M(74) M(75) M(76) M(77) M(78) M(79) \
    M(80) M(81) M(82) M(83) M(84) M(85) M(86) M(87) M(88) M(89) M(90) M(91) M(92) M(93) M(94) M(95) \
    M(96) M(97) M(98) M(99) M(100) M(101) M(102) M(103) M(104) M(105) M(106) M(107) M(108) M(109) M(110) M(111) \
    M(112) M(113) M(114) M(115) M(116) M(117) M(118) M(119) M(120) M(121) M(122) M(123) M(124) M(125) M(126) M(127)

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

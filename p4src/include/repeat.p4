/* repeat.p4: INA_REPEAT_<K>(M) expands to M(0) M(1) ... M(K-1), K in {16, 32, 64, 128}; M pastes the index into
 * field names (d##i), so a program declares and processes its payload fields d0..d{K-1} without writing them out. */
#ifndef INA_REPEAT_P4
#define INA_REPEAT_P4

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

#endif

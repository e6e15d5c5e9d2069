!     fbsp.h: bsplib's Fortran declarations, for INCLUDE 'fbsp.h' in
!     free-form and fixed-form source alike (columns 7 to 72, comments
!     in column 1). It gives the BSPlib functions their types, byte
!     sizes of the intrinsic types for offsets and lengths, and the
!     common block bspunregistered. A program includes it or declares
!     the functions itself (INTEGER, EXTERNAL :: bsppid), not both.
!     Pids and offsets count from 0; lengths are in bytes.
      INTEGER bspnprocs, bsppid
      DOUBLE PRECISION bsptime
      EXTERNAL bspnprocs, bsppid, bsptime
!     The machine's BSP parameters (bspprobe; C's bsp_g ...): g in
!     seconds per byte, l in seconds, s in flop/s, nhalf in bytes.
      DOUBLE PRECISION bspg, bspl, bsps
      INTEGER bspnhalf
      EXTERNAL bspg, bspl, bsps, bspnhalf
!     Bytes of one INTEGER, REAL, DOUBLE PRECISION, LOGICAL, COMPLEX,
!     DOUBLE COMPLEX and CHARACTER of the default kinds (gfortran).
      INTEGER BSPINT, BSPREAL, BSPDOUBLE, BSPLOGICAL
      INTEGER BSPCOMPLEX, BSPDCOMPLEX, BSPCHAR
      PARAMETER (BSPINT=4, BSPREAL=4, BSPDOUBLE=8, BSPLOGICAL=4)
      PARAMETER (BSPCOMPLEX=8, BSPDCOMPLEX=16, BSPCHAR=1)
!     Passed to bsppushreg as the area of a process that registers
!     nothing in a slot (C's NULL): CALL bsppushreg(bspunregistered,0)
      INTEGER bspunregistered(1)
      COMMON /bspunregistered/ bspunregistered
!     The level-1 collectives (bsp_level1.h's, the C name without
!     underscores): bspbcast, bspgather, bspscatter, bspexchange,
!     bspfold and bspscan are subroutines; these are functions, each
!     one superstep, combining in pid order.
      INTEGER bspsumi, bspsumiprefix, bspproducti, bspproductiprefix
      INTEGER bspmini, bspminiprefix, bspmaxi, bspmaxiprefix
      INTEGER bspall, bspany
      REAL bspsumr, bspsumrprefix, bspproductr, bspproductrprefix
      REAL bspminr, bspminrprefix, bspmaxr, bspmaxrprefix
      DOUBLE PRECISION bspsumd, bspsumdprefix, bspproductd
      DOUBLE PRECISION bspproductdprefix, bspmind, bspmindprefix
      DOUBLE PRECISION bspmaxd, bspmaxdprefix
      EXTERNAL bspsumi, bspsumiprefix, bspproducti, bspproductiprefix
      EXTERNAL bspmini, bspminiprefix, bspmaxi, bspmaxiprefix
      EXTERNAL bspall, bspany
      EXTERNAL bspsumr, bspsumrprefix, bspproductr, bspproductrprefix
      EXTERNAL bspminr, bspminrprefix, bspmaxr, bspmaxrprefix
      EXTERNAL bspsumd, bspsumdprefix, bspproductd
      EXTERNAL bspproductdprefix, bspmind, bspmindprefix
      EXTERNAL bspmaxd, bspmaxdprefix

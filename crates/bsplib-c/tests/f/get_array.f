C     The manual page's get_array in fixed form with INCLUDE 'fbsp.h':
C     xs(i) := xs(xs(i)) for a block-distributed array of n = 3p
C     elements, global index g holding MOD(g+1,n) (its successor).
      PROGRAM GETAR
      INCLUDE 'fbsp.h'
      INTEGER XS(3), I, G, N, S, BAD
      CALL BSPBEGIN(BSPNPROCS())
      S = BSPPID()
      N = 3 * BSPNPROCS()
      DO 10 I = 1, 3
        G = 3 * S + I - 1
        XS(I) = MOD(G + 1, N)
   10 CONTINUE
      CALL GETARR(XS, N)
      BAD = 0
      DO 20 I = 1, 3
        G = 3 * S + I - 1
        IF (XS(I) .NE. MOD(G + 2, N)) BAD = BAD + 1
   20 CONTINUE
      IF (BAD .NE. 0) CALL BSPABORT('get_array: wrong values')
      IF (S .EQ. 0) WRITE (*, '(A)') 'ok'
      CALL BSPEND()
      END

      SUBROUTINE GETARR(XS, N)
      INCLUDE 'fbsp.h'
      INTEGER XS(*), N
      INTEGER I, PID, LOCIDX, NOVERP
      NOVERP = N / BSPNPROCS()
      IF (MOD(N, BSPNPROCS()) .NE. 0) THEN
        CALL BSPABORT('get_array: n not divisible by p')
      END IF
      CALL BSPPUSHREG(XS, NOVERP * BSPINT)
      CALL BSPSYNC()
      DO 30 I = 1, NOVERP
        PID = XS(I) / NOVERP
        LOCIDX = MOD(XS(I), NOVERP)
        CALL BSPGET(PID, XS, LOCIDX * BSPINT, XS(I), BSPINT)
   30 CONTINUE
      CALL BSPSYNC()
      CALL BSPPOPREG(XS)
      END

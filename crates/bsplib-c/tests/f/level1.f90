! The level-1 collectives under their Fortran names: bspbcast of an array,
! bspgather / bspscatter, bspexchange, bspfold with a user subroutine that
! is associative but not commutative (2 x 2 integer matrix product, in
! pid order), bspscan, and the typed reductions (sums, products, minima,
! maxima, prefixes, all, any), each checked against the expected value.
program level1_test
  implicit none
  include 'fbsp.h'
  external matmul2
  integer :: s, p, i, j, q
  integer :: a(3), g(64), sc(2), all_sc(128), ex(64), got(64)
  integer :: m(4), r(4), want(4), t(4)
  double precision :: dsum
  call bspbegin(bspnprocs())
  s = bsppid()
  p = bspnprocs()
  ! bspbcast from the last process.
  a = (/ 10 * s, 10 * s + 1, 10 * s + 2 /)
  call bspbcast(p - 1, a, a, 3 * BSPINT)
  call checki(a(3), 10 * (p - 1) + 2, 'bspbcast')
  ! bspgather to process 0: process i's value at i.
  g = -1
  call bspgather(0, s * 7, g, BSPINT)
  if (s == 0) then
    do i = 1, p
      call checki(g(i), (i - 1) * 7, 'bspgather')
    end do
  end if
  ! bspscatter from process 0: two values each.
  do i = 1, 2 * p
    all_sc(i) = 100 + i
  end do
  call bspscatter(0, all_sc, sc, 2 * BSPINT)
  call checki(sc(1), 100 + 2 * s + 1, 'bspscatter')
  call checki(sc(2), 100 + 2 * s + 2, 'bspscatter')
  ! bspexchange: block j of ex goes to process j.
  do j = 1, p
    ex(j) = 1000 * s + (j - 1)
  end do
  call bspexchange(ex, got, BSPINT)
  do q = 1, p
    call checki(got(q), 1000 * (q - 1) + s, 'bspexchange')
  end do
  ! bspfold and bspscan with a non-commutative operator.
  m = (/ s + 1, 2, 3 * s, 1 + s * s /)
  call bspfold(matmul2, m, r, 4 * BSPINT)
  want = (/ 1, 2, 0, 1 /)
  do q = 1, p - 1
    t = (/ q + 1, 2, 3 * q, 1 + q * q /)
    call matmul2(want, want, t, 4 * BSPINT)
  end do
  do i = 1, 4
    call checki(r(i), want(i), 'bspfold')
  end do
  call bspscan(matmul2, m, r, 4 * BSPINT)
  want = (/ 1, 2, 0, 1 /)
  do q = 1, s
    t = (/ q + 1, 2, 3 * q, 1 + q * q /)
    call matmul2(want, want, t, 4 * BSPINT)
  end do
  do i = 1, 4
    call checki(r(i), want(i), 'bspscan')
  end do
  ! Typed reductions.
  call checki(bspsumi(s + 1), p * (p + 1) / 2, 'bspsumi')
  call checki(bspsumiprefix(s + 1), (s + 1) * (s + 2) / 2, 'bspsumiprefix')
  call checki(bspmaxi(s), p - 1, 'bspmaxi')
  call checki(bspmini(s + 5), 5, 'bspmini')
  call checki(bspproducti(2), 2 ** p, 'bspproducti')
  call checki(bspall(1), 1, 'bspall')
  call checki(bspany(merge(1, 0, s == p - 1)), 1, 'bspany')
  call checki(bspall(merge(1, 0, s == 0)), merge(1, 0, p == 1), 'bspall')
  dsum = 0d0
  do q = 0, p - 1
    dsum = dsum + 0.1d0 * (q + 1)
  end do
  call check(bspsumd(0.1d0 * (s + 1)) == dsum, 'bspsumd in pid order')
  call check(bspmaxr(real(s)) == real(p - 1), 'bspmaxr')
  call reportok()
  call bspend()
end program level1_test

! res = left x right, 2 x 2 integer matrices stored row by row.
subroutine matmul2(res, left, right, nbytes)
  implicit none
  integer :: res(4), left(4), right(4), nbytes
  integer :: o(4)
  o(1) = left(1) * right(1) + left(2) * right(3)
  o(2) = left(1) * right(2) + left(2) * right(4)
  o(3) = left(3) * right(1) + left(4) * right(3)
  o(4) = left(3) * right(2) + left(4) * right(4)
  res = o
  if (nbytes /= 16) call bspabort('matmul2: nbytes')
end subroutine matmul2

include 'fcheck.inc'

! The manual page's bspsum with bsphpget: every process ends with the
! sum of all the processes' arrays (process s holds s+1 values 1..s+1).
program bsp_sum_test
  implicit none
  integer, external :: bspnprocs, bsppid, bspsum
  integer :: xs(8), i, s, p, want
  call bspbegin(bspnprocs())
  s = bsppid()
  p = bspnprocs()
  do i = 1, s + 1
    xs(i) = i
  end do
  want = 0
  do i = 1, p
    want = want + i * (i + 1) / 2
  end do
  call checki(bspsum(xs, s + 1), want, 'bspsum')
  call reportok()
  call bspend()
end program bsp_sum_test

integer function bspsum(xs, nelem)
  implicit none
  integer :: xs(*), nelem
  integer, external :: bspnprocs
  integer, parameter :: maxprocs = 64
  integer :: i, result, localsums(maxprocs)
  result = sum(xs(1:nelem))
  call bsppushreg(result, 4)
  call bspsync()
  do i = 0, bspnprocs() - 1
    call bsphpget(i, result, 0, localsums(i + 1), 4)
  end do
  call bspsync()
  call bsppopreg(result)
  bspsum = sum(localsums(1:bspnprocs()))
end function bspsum

include 'fcheck.inc'

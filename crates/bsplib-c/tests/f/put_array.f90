! The paper's put_array: xs(xs(i)) := xs(i) for a block-distributed
! global array of n = 4p elements holding a permutation (global index g
! holds n-1-g), with indices from 0 as in the paper.
program put_array_test
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: xs(4), i, g, n, s
  call bspbegin(bspnprocs())
  s = bsppid()
  n = 4 * bspnprocs()
  do i = 1, 4
    g = 4 * s + i - 1
    xs(i) = n - 1 - g
  end do
  call put_array(xs, n)
  do i = 1, 4
    g = 4 * s + i - 1
    call checki(xs(i), g, 'xs(i) after the assignment')
  end do
  call reportok()
  call bspend()
end program put_array_test

subroutine put_array(xs, n)
  implicit none
  integer :: xs(*), n
  integer, external :: bspnprocs
  integer :: i, pid, localidx, noverp
  noverp = n / bspnprocs()
  if (mod(n, bspnprocs()) /= 0) call bspabort('put_array: n not divisible by p')
  call bsppushreg(xs, noverp * 4)
  call bspsync()
  do i = 1, noverp
    pid = xs(i) / noverp
    localidx = mod(xs(i), noverp)
    call bspput(pid, xs(i), xs, localidx * 4, 4)
  end do
  call bspsync()
  call bsppopreg(xs)
end subroutine put_array

include 'fcheck.inc'

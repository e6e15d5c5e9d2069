! bspinit(spmdproc): the sequential part prints "before", the SPMD
! subroutine runs on every process and prints "ok" on process 0, and the
! sequential part after it prints "after" once.
program init_mode
  implicit none
  external :: spmd
  call bspinit(spmd)
  write (*, '(a)') 'before'
  flush (6)
  call spmd()
  write (*, '(a)') 'after'
end program init_mode

subroutine spmd()
  implicit none
  integer, external :: bspnprocs, bsppid, expectednprocs
  integer :: x, left
  call bspbegin(bspnprocs())
  call checki(bspnprocs(), expectednprocs(), 'bspnprocs()')
  x = 100 + bsppid()
  left = -1
  call bsppushreg(x, 4)
  call bspsync()
  call bspget(mod(bsppid() + bspnprocs() - 1, bspnprocs()), x, 0, left, 4)
  call bspsync()
  call checki(left, 100 + mod(bsppid() + bspnprocs() - 1, bspnprocs()), 'x of the left neighbour')
  call reportok()
  call bspend()
end subroutine spmd

include 'fcheck.inc'

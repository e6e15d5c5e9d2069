! bspsync: puts land at the sync and not before, over 10 supersteps, each
! process counting the supersteps its right neighbour reports.
program sync
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: p, s, step, box
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  box = -1
  call bsppushreg(box, 4)
  call bspsync()
  do step = 1, 10
    call bspput(mod(s + 1, p), step, box, 0, 4)
    call checki(box, merge(-1, step - 1, step == 1), 'box before the sync')
    call bspsync()
    call checki(box, step, 'box after the sync')
  end do
  call bsppopreg(box)
  call bspsync()
  call reportok()
  call bspend()
end program sync

include 'fcheck.inc'

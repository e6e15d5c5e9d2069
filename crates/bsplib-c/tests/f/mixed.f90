! One library for both bindings: a Fortran main program registers an
! array with bsppushreg; a C helper (mixed_helper.c) puts into it with
! bsp_put; the Fortran side syncs and checks; the C helper then reads
! bsp_pid and the superstep's data the Fortran side put.
program mixed
  implicit none
  integer, external :: bspnprocs, bsppid, chelper_sum
  integer :: p, s, box(2), right
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  right = mod(s + 1, p)
  box = -1
  call bsppushreg(box, 8)
  call bspsync()
  call chelper_put(right, box)
  call bspsync()
  call checki(box(1), 500 + mod(s + p - 1, p), 'box(1) put by the C helper')
  call bspput(right, 600 + s, box, 4, 4)
  call bspsync()
  call checki(chelper_sum(box), 500 + 600 + 2 * mod(s + p - 1, p), 'sum seen from C')
  call bsppopreg(box)
  call bspsync()
  call reportok()
  call bspend()
end program mixed

include 'fcheck.inc'

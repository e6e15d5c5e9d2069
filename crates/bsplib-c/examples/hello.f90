! Hello world in Fortran, plain SPMD mode: bspbegin is the first statement.
!   bspf90 hello.f90 -o hello && bsprun -np 4 ./hello
program hello
  implicit none
  integer, external :: bspnprocs, bsppid
  call bspbegin(bspnprocs())
  write (*, '(a,i0,a,i0)') 'Hello BSP from process ', bsppid(), ' of ', bspnprocs()
  call bspend()
end program hello

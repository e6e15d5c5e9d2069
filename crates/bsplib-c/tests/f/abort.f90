! bspabort: process 0 aborts with a message (trailing blanks dropped);
! the run ends with a non-zero status and the message on stderr.
program abort
  implicit none
  integer, external :: bspnprocs, bsppid
  character(len=40) :: message
  call bspbegin(bspnprocs())
  call bspsync()
  message = 'bspabort test: 42 forty-two'
  if (bsppid() == 0) call bspabort(message)
  call bspsync()
  write (*, '(a)') 'not reached'
  call bspend()
end program abort

//! `bspf77`: another name for `bspf90` (the same program, built twice:
//! gfortran compiles fixed-form `.f` files and free-form `.f90` files
//! alike).

use std::process::ExitCode;

#[path = "bspf90.rs"]
#[allow(dead_code)]
mod bspf90;

fn main() -> ExitCode {
    bspf90::run()
}

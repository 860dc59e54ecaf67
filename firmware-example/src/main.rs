//! picobpe demo firmware: tokenize a built-in text, print ids and figures over semihosting.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use semihosting::{println, process};

#[entry]
fn main() -> ! {
    println!("picobpe firmware on {}", picobpe_firmware::MACHINE);
    process::exit(0)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    semihosting::eprintln!("panic: {info}");
    process::exit(101)
}

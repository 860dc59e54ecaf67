//! On-target tests, run one per QEMU boot by `cargo xtask firmware-test`.
#![no_std]
#![no_main]

/// Prints the panic message over semihosting, then exits with 134 (abort), which the runner
/// reads as a failed test.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    semihosting::eprintln!("panic: {info}");
    semihosting::process::abort()
}

#[cfg(test)]
#[embedded_test::tests]
mod tests {
    #[test]
    fn machine_is_known() {
        assert!(
            picobpe_firmware::MACHINE == "lm3s6965evb" || picobpe_firmware::MACHINE == "mps2-an385"
        );
    }

    #[test]
    fn stack_measure_sees_a_frame() {
        let (_, used) = picobpe_firmware::stack::measure(|| {
            let buf = core::hint::black_box([7u8; 512]);
            buf.iter().map(|&b| b as u32).sum::<u32>()
        });
        assert!(used >= 512, "used {used}");
    }
}

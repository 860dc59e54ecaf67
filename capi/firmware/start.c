/* Start-up and platform of picobpe's C firmware example, bare metal on QEMU's mps2-an385
 * (Cortex-M3), without a C library: the vector table (initial stack pointer, reset and fault
 * handlers), the reset handler (copies .data from flash, zeroes .bss, calls main, exits with its
 * status), ARM semihosting (`bkpt 0xAB`; QEMU runs with `-semihosting-config
 * enable=on,target=native`) for output to QEMU's stdout and for the exit status, and SysTick as
 * a stopwatch. The memory map is in link.ld. */
#include <stddef.h>
#include <stdint.h>

#include "board.h"

/* Semihosting operations, the mode of SYS_OPEN that opens ":tt" as stdout, and the reason code
 * of a normal exit. */
#define SYS_OPEN 0x01u
#define SYS_WRITE 0x05u
#define OPEN_MODE_W 4u
#define SYS_EXIT 0x18u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

/* SysTick registers (ARMv7-M system control space). */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SYST_CSR_ENABLE_CORE_CLOCK 0x5u
#define SYST_RELOAD 0x00FFFFFFu

/* Linker-script symbols (link.ld). */
extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _estack[];

void reset_handler(void) __attribute__((noreturn));
static void fault_handler(void);

/* The vector table: the initial stack pointer, then the 15 system exception handlers. */
struct vector_table {
    uint32_t *initial_sp;
    void (*handlers[15])(void);
};

__attribute__((section(".isr_vector"), used)) static const struct vector_table vectors = {
    _estack,
    {
        reset_handler, /* Reset */
        fault_handler, /* NMI */
        fault_handler, /* HardFault */
        fault_handler, /* MemManage */
        fault_handler, /* BusFault */
        fault_handler, /* UsageFault */
        NULL, NULL, NULL, NULL,
        fault_handler, /* SVCall */
        fault_handler, /* DebugMonitor */
        NULL,
        fault_handler, /* PendSV */
        fault_handler, /* SysTick (its interrupt is never enabled) */
    },
};

static uint32_t semihost(uint32_t op, const void *arg) {
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void reset_handler(void) {
    uint32_t *src = _sidata;
    for (uint32_t *dst = _sdata; dst < _edata;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = _sbss; dst < _ebss;) {
        *dst++ = 0;
    }
    board_exit(main());
}

static void fault_handler(void) {
    board_puts("FAIL: fault exception\n");
    board_exit(3);
}

void board_puts(const char *s) {
    /* SYS_WRITE0 would go to QEMU's stderr: write to ":tt" opened for writing, its stdout. */
    static uint32_t handle;
    static int opened;
    if (!opened) {
        static const char tt[] = ":tt";
        const uint32_t open_block[3] = {(uint32_t)(uintptr_t)tt, OPEN_MODE_W, sizeof tt - 1};
        handle = semihost(SYS_OPEN, open_block);
        opened = 1;
    }
    size_t len = 0;
    while (s[len]) {
        len++;
    }
    const uint32_t write_block[3] = {handle, (uint32_t)(uintptr_t)s, (uint32_t)len};
    (void)semihost(SYS_WRITE, write_block);
}

void board_exit(int code) {
    if (code == 0) {
        /* The 32-bit SYS_EXIT takes the reason itself; QEMU exits with status 0. */
        (void)semihost(SYS_EXIT, (const void *)(uintptr_t)ADP_STOPPED_APPLICATION_EXIT);
    } else {
        /* SYS_EXIT_EXTENDED carries an exit status: QEMU exits with `code`. */
        const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
        (void)semihost(SYS_EXIT_EXTENDED, block);
    }
    for (;;) {
    }
}

void board_systick_start(void) {
    SYST_CSR = 0;
    SYST_RVR = SYST_RELOAD;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_ENABLE_CORE_CLOCK;
}

uint32_t board_systick(void) {
    return SYST_CVR;
}

uint32_t board_calibrate(void) {
    uint32_t n = BOARD_CALIBRATION_ITERS;
    uint32_t start = SYST_CVR;
    /* `subs` + `bne`: 2 instructions per iteration. */
    __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
    return (start - SYST_CVR) & SYST_RELOAD;
}

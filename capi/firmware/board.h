/* The bare-metal platform of picobpe's C firmware example (start.c), for QEMU's mps2-an385
 * (Cortex-M3): console output and exit through ARM semihosting, and SysTick as a stopwatch. */
#ifndef BOARD_H
#define BOARD_H

#include <stdint.h>

/* Writes a NUL-terminated string to QEMU's stdout (semihosting SYS_OPEN ":tt", SYS_WRITE). */
void board_puts(const char *s);

/* Ends the run: QEMU exits with `code` (0: success). */
void board_exit(int code) __attribute__((noreturn));

/* Starts SysTick free-running on the core clock, counting down from 2^24 - 1. */
void board_systick_start(void);

/* SysTick's current value (24 bits, counting down). */
uint32_t board_systick(void);

/* SysTick ticks a loop of 2 * BOARD_CALIBRATION_ITERS instructions takes (SysTick started). */
#define BOARD_CALIBRATION_ITERS 1000000u
uint32_t board_calibrate(void);

/* The program: returns the exit code (main.c). */
int main(void);

#endif /* BOARD_H */

/* The conformance vectors of picobpe's C firmware example, embedded in flash: the PBVEC1 file
 * `cargo xtask c-firmware-test` writes from tiktoken's gpt2 reference vectors (the format is
 * documented in xtask/src/firmware/vectors.rs). The build passes its path as PICOBPE_VECTORS,
 * a quoted string. main.c reads pbvec_start[0 .. pbvec_end - pbvec_start]. */
    .section .rodata.pbvec, "a"
    .balign 4
    .global pbvec_start
    .global pbvec_end
    .type pbvec_start, %object
pbvec_start:
    .incbin PICOBPE_VECTORS
pbvec_end:
    .size pbvec_start, pbvec_end - pbvec_start

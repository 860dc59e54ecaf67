//! picobpe model format (being written).

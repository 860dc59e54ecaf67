//! Shared helpers for the exactness tests.

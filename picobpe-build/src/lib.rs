//! Bake step (being written).

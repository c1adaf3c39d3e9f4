//! AFL++ target: `reliability::fuzz::stream`.

fn main() {
    afl::fuzz!(|data: &[u8]| reliability::fuzz::stream(data));
}

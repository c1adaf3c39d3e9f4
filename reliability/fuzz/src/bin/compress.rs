//! AFL++ target: `reliability::fuzz::compress`.

fn main() {
    afl::fuzz!(|data: &[u8]| reliability::fuzz::compress(data));
}

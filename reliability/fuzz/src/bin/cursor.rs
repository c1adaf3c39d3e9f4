//! AFL++ target: `reliability::fuzz::cursor`.

fn main() {
    afl::fuzz!(|data: &[u8]| reliability::fuzz::cursor(data));
}

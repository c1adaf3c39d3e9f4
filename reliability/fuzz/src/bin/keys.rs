//! AFL++ target: `reliability::fuzz::keys`.

fn main() {
    afl::fuzz!(|data: &[u8]| reliability::fuzz::keys(data));
}

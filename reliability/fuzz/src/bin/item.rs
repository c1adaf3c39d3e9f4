//! AFL++ target: `reliability::fuzz::item`.

fn main() {
    afl::fuzz!(|data: &[u8]| reliability::fuzz::item(data));
}

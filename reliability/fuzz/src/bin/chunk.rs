//! AFL++ target: `reliability::fuzz::chunk`.

fn main() {
    afl::fuzz!(|data: &[u8]| reliability::fuzz::chunk(data));
}

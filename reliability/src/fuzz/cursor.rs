//! Cursors: the text a client hands back. A text is decoded as it is (base64, checksum),
//! and the input's bytes are also sealed as a cursor's body, so the decoder behind the
//! checksum is reached too.

use super::input::Input;
use dynamo_model::__private::cursor_codec as codec;
use dynamo_model::Cursor;
use dynamo_model::cursor::Position;

const FINGERPRINT: [u8; 16] = *b"fuzz-fingerprint";
const SECRET: &[u8] = b"fuzz";

/// Decodes the input as a cursor's text and as a body of each version of cursor; what
/// decodes must encode to a cursor that decodes to the same key or positions.
pub fn cursor(data: &[u8]) {
    let mut input = Input::new(data);
    let sources = usize::from(input.byte() % 8);
    let body = input.rest();
    let text = Cursor::from(String::from_utf8_lossy(body).as_ref());
    let _ = codec::decode(&text, FINGERPRINT, SECRET);
    let _ = codec::decode_positions(&text, FINGERPRINT, sources, SECRET);
    // The body as both versions would carry it: version, fingerprint, then the input.
    for version in [1u8, 2] {
        let mut sealed = vec![version];
        sealed.extend_from_slice(&FINGERPRINT);
        sealed.extend_from_slice(body);
        let cursor = codec::seal(sealed, SECRET);
        if let Ok(key) = codec::decode(&cursor, FINGERPRINT, SECRET) {
            let again = codec::encode(FINGERPRINT, &key, SECRET);
            assert_eq!(codec::decode(&again, FINGERPRINT, SECRET), Ok(key));
        }
        if let Ok(positions) = codec::decode_positions(&cursor, FINGERPRINT, sources, SECRET) {
            check_positions(&positions, sources);
        }
    }
}

fn check_positions(positions: &[Position], sources: usize) {
    assert_eq!(positions.len(), sources);
    let again = codec::encode_positions(FINGERPRINT, positions, SECRET);
    assert_eq!(
        codec::decode_positions(&again, FINGERPRINT, sources, SECRET).as_deref(),
        Ok(positions)
    );
}

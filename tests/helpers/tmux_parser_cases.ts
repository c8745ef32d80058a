/**
 * What tmux 3.3a prints of escape sequences cancelled, ended or left open, as cases shared by
 * the stream decoder's unit test and the test that checks them against real tmux.
 *
 * @module
 */

/**
 * Bytes a program writes, and the rows tmux 3.3a shows for them (captured from a pane as a
 * person sees it, one row per line, blank rows dropped). src/tmux/terminal_text_test.ts checks the decoder prints them;
 * tests/stream_decoder_test.ts prints each into a real pane and checks the screen shows them.
 */
export const TMUX_CASES: readonly { readonly bytes: string; readonly shown: string[] }[] = [
  // CAN or SUB cancels a sequence: what follows is printed.
  { bytes: "A\x1b]0;t\x18SHOWN\x07B", shown: ["ASHOWNB"] },
  { bytes: "A\x1b]0;t\x1aSHOWN\x07B", shown: ["ASHOWNB"] },
  { bytes: "A\x1b[1;2\x18SHOWN", shown: ["ASHOWN"] },
  { bytes: "A\x1b_apc\x18SHOWN\x1b\\B", shown: ["ASHOWNB"] },
  { bytes: "A\x1b^pm\x18SHOWN\x1b\\B", shown: ["ASHOWNB"] },
  { bytes: "A\x1bXsos\x1aSHOWN\x1b\\B", shown: ["ASHOWNB"] },
  { bytes: "A\x1bkti\x18SHOWN\x1b\\B", shown: ["ASHOWNB"] },
  { bytes: "A\x1b#\x18SHOWN", shown: ["ASHOWN"] },
  // A DCS before its final byte too (also one tmux ignores for a parameter it refuses)...
  { bytes: "A\x1bP1;2\x18SHOWN\x1b\\B", shown: ["ASHOWNB"] },
  { bytes: "A\x1bP1:q\x18SHOWN", shown: ["ASHOWN"] },
  { bytes: "A\x1bP1?q\x18SHOWN", shown: ["ASHOWN"] },
  // ...but not its data, which neither BEL nor ESC and another byte end: only ESC \.
  { bytes: "A\x1bPq\x18HIDDEN\x1b\\B", shown: ["AB"] },
  { bytes: "A\x1bP1$q\x18HIDDEN\x1b\\B", shown: ["AB"] },
  { bytes: "A\x1bP?q\x18HIDDEN\x1b\\B", shown: ["AB"] },
  { bytes: "A\x1bP\x07Build OK\x1b\\B", shown: ["AB"] },
  { bytes: "A\x1bPq\x1b[mHIDDEN\x07\x1b\\B", shown: ["AB"] },
  // ESC ends an OSC or an APC and begins a sequence of its own; BEL ends an OSC only.
  { bytes: "A\x1b]0;t\x1b[mSHOWN\x07B", shown: ["ASHOWNB"] },
  { bytes: "A\x1b_apc\x1b[mSHOWN\x1b\\B", shown: ["ASHOWNB"] },
  { bytes: "A\x1b_apc\x07HIDDEN\x1b\\B", shown: ["AB"] },
  { bytes: "A\x1bkTITLE\x1b\\B", shown: ["AB"] },
  { bytes: "A\x1b]0;t\r\nHIDDEN\x07B", shown: ["AB"] },
  // Intermediates repeat until the final byte.
  { bytes: "A\x1b #(SHOWN", shown: ["AHOWN"] },
  // Line ends inside an escape or a CSI are carried out; bytes from DEL up are ignored.
  { bytes: "A\x1b\r\n=Z", shown: ["A", "Z"] },
  { bytes: "A\x1b[1\r\n2mZ", shown: ["A", "Z"] },
  { bytes: "A\x1b \r\n(BZ", shown: ["A", "Z"] },
  { bytes: "A\x1b\xc3\xa9=Z", shown: ["AZ"] },
  { bytes: "A\x1b[\xc3\xa92mZ", shown: ["AZ"] },
  // However long, a sequence stays one: none of it is printed.
  { bytes: `A\x1b]0;${"x".repeat(10_000)}\x07B`, shown: ["AB"] },
  { bytes: `A\x1b_${"x".repeat(10_000)}\x1b\\B`, shown: ["AB"] },
  { bytes: `A\x1bPq${"x".repeat(10_000)}\x1b\\B`, shown: ["AB"] },
  { bytes: `A\x1b[${"1;".repeat(5_000)}mB`, shown: ["AB"] },
  // What a person does not see is blank: hidden, or in its background's colour (bold in one of
  // the first eight too, which VTE draws as it is); as saved with the cursor too.
  { bytes: "A\x1b[8mHID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[31;41mRED\x1b[0mB\x1b[1;31;41mRED\x1b[mC", shown: ["A   B   C"] },
  { bytes: "A\x1b[2;38;5;237;48;5;16mDIM\x1b[22mB", shown: ["A   B"] },
  { bytes: "A\x1b[38;5;196;48;2;255;0;0mRGB\x1b[49mC", shown: ["A   C"] },
  { bytes: "A\x1b[8m\x1b7\x1b[0m\x1b8HID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[8m\x1b[s\x1b[0m\x1b[uHID\x1b[28mB", shown: ["A   B"] },
  // As tmux's input parser reads an SGR, not as its `-e` writes one: a colon parameter counts
  // only as an extended colour; a number past 2147483647, more than 23 parameters or more
  // than 63 parameter bytes drop the sequence whole; an invalid true colour takes nothing
  // after it; after 38 the next parameter is always taken.
  { bytes: "A\x1b[8m\x1b[:mHID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[8m\x1b[0:1mHID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[8m\x1b[99999999999;0mHID\x1b[28mB", shown: ["A   B"] },
  { bytes: `A\x1b[8m\x1b[${"1;".repeat(23)}0mHID\x1b[28mB`, shown: ["A   B"] },
  { bytes: `A\x1b[8m\x1b[${"1;".repeat(22)}0mSEEN\x1b[28mB`, shown: ["ASEENB"] },
  { bytes: `A\x1b[8m\x1b[${"0".repeat(64)}mHID\x1b[28mB`, shown: ["A   B"] },
  { bytes: `A\x1b[8m\x1b[${"0".repeat(63)}mSEEN\x1b[28mB`, shown: ["ASEENB"] },
  { bytes: "A\x1b[48;2;300;8mHID\x1b[0mB", shown: ["A   B"] },
  { bytes: "A\x1b[31;41m\x1b[48:5mHID\x1b[0mB", shown: ["A   B"] },
  { bytes: "A\x1b[38;8mSEEN\x1b[0mB", shown: ["ASEENB"] },
  // Saved with the cursor by CSI s with parameters too; the alternate screen's store is its own
  // (attributes only, never the character sets), and each mode of a list is read.
  { bytes: "A\x1b[8m\x1b[1s\x1b[0m\x1b[1uHID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[8m\x1b7\x1b[0m\x1b[?1049h\x1b[?1049l\x1b8HID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[8m\x1b[?1;1049h\x1b[0m\x1b[?1049lHID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[?1049h\x1b(0\x1b[?1049lapprove\x1b(BB", shown: ["A▒⎻⎻⎼⎺┴␊B"] },
  // A byte from DEL up in a CSI is ignored; a marker after the first parameter byte, or a
  // restore tmux refuses, leaves the sequence undone; a mode is a number (01049 is 1049).
  { bytes: "A\x1b[8\x80mHID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b7\x1b[8m\x1b[99999999999uHID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[8m\x1b[?01049h\x1b[0m\x1b[?1049lHID\x1b[28mB", shown: ["A   B"] },
  { bytes: "A\x1b[0:<;8mSEEN\x1b[0mB", shown: ["ASEENB"] },
  // A character of several bytes is gathered as tmux gathers it: shown or not by the
  // attributes at its last byte, dropped when no character, cut by a control but not by ESC.
  { bytes: "A\xc3\x1b[8m\xa9\x1b[28m\xa9B", shown: ["A B"] },
  { bytes: "A\xe2\xc3\xa9B", shown: ["AB"] },
  { bytes: "A\xc3\x07\xa9B", shown: ["AB"] },
  { bytes: "A\xc3\x1b]0;x\x07\xa9B", shown: ["AéB"] },
  // The line-drawing set shows its glyphs: designated, shifted, reset.
  { bytes: "A\x1b(0lqk\x1b(BB", shown: ["A┌─┐B"] },
  { bytes: "A\x1b)0\x0eyes\x0fB", shown: ["A≤␊⎽B"] },
  { bytes: "\x1b(0\x1b[8m\x1bcq", shown: ["q"] },
  { bytes: "A\x1b(\x0e0x\x0fxB\x1b(B", shown: ["Ax│B"] },
];

/** A case's bytes: each character below U+0100 one byte (\xNN as that byte), the rest UTF-8. */
export function caseBytes(text: string): Uint8Array {
  return Uint8Array.from([...text].flatMap((c) => {
    const code = c.codePointAt(0)!;
    return code < 0x100 ? [code] : [...new TextEncoder().encode(c)];
  }));
}

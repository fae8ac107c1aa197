/// Text read from a database file that may be hostile (a schema object's
/// name, a recorded migration's name), made safe to quote in an error that
/// reaches a terminal or a log: printable ASCII is kept, every other byte
/// and the backslash become `\xHH`, and anything past `limit` bytes is cut
/// and marked. Raw, such a name could carry a line break, a terminal
/// control sequence or a right-to-left override into the operator's view.
package enum UntrustedText {
    package static func quoted(_ text: String, limit: Int = 64) -> String {
        var result = ""
        for byte in text.utf8.prefix(limit) {
            if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text.utf8.count > limit ? result + "..." : result
    }
}

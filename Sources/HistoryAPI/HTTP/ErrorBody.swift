import HTTPCore

extension HTTPResponse {
    /// The contract's error shape, `{"error": {"code": ..., "message": ...}}`,
    /// the only error body this server ever sends.
    public static func error(_ status: HTTPStatus, code: String, message: String,
                             headers extra: HTTPHeaders = [:], route: String? = nil) -> HTTPResponse {
        var body = Array(#"{"error":{"code":"#.utf8)
        appendJSONString(code, to: &body)
        body += Array(#","message":"#.utf8)
        appendJSONString(message, to: &body)
        body += Array("}}".utf8)
        var response = json(status, body, route: route)
        for field in extra { response.headers.replaceOrAdd(name: field.name, value: field.value) }
        return response
    }
}

/// Appends `text` as a JSON string literal (RFC 8259 §7): quotes, backslash
/// and control characters escaped, everything else copied as UTF-8.
public func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
        case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
        case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
        case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
        case 0x00..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            bytes += Array(#"\u00"#.utf8)
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
        default: bytes.append(byte)
        }
    }
    bytes.append(UInt8(ascii: "\""))
}

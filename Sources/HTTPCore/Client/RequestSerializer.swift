/// Writes a request as bytes for the client: request line, the request's
/// fields, then what HTTP/1.1 needs and the caller left out (`Host`, and
/// `Content-Length` when there is a body or the method usually carries
/// one), then the body.
public enum RequestSerializer {
    public static func append(_ request: HTTPRequest, host: String, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + 128 + request.body.count)
        output.append(contentsOf: request.method.rawValue.utf8)
        output.append(HTTPSyntax.space)
        output.append(contentsOf: request.target.utf8)
        output.append(contentsOf: request.version == .http1_0 ? " HTTP/1.0\r\n".utf8 : " HTTP/1.1\r\n".utf8)
        var hasHost = false, hasLength = false, hasCoding = false
        for field in request.headers {
            switch field.name.utf8.count {
            case 4 where field.name.caseInsensitiveEquals("Host"): hasHost = true
            case 14 where field.name.caseInsensitiveEquals("Content-Length"): hasLength = true
            case 17 where field.name.caseInsensitiveEquals("Transfer-Encoding"): hasCoding = true
            default: break
            }
            output.append(contentsOf: field.name.utf8)
            output.append(contentsOf: ": ".utf8)
            output.append(contentsOf: field.value.utf8)
            output.append(contentsOf: "\r\n".utf8)
        }
        if !hasHost {
            output.append(contentsOf: "Host: ".utf8)
            output.append(contentsOf: host.utf8)
            output.append(contentsOf: "\r\n".utf8)
        }
        let method = request.method
        if !hasLength && !hasCoding && (!request.body.isEmpty || method == .post || method == .put || method == .patch) {
            output.append(contentsOf: "Content-Length: ".utf8)
            ResponseSerializer.appendDecimal(request.body.count, to: &output)
            output.append(contentsOf: "\r\n".utf8)
        }
        output.append(contentsOf: "\r\n".utf8)
        output.append(contentsOf: request.body)
    }
}

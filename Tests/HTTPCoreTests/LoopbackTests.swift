import Foundation
import Testing
@testable import HTTPCore

@Suite("Loopback server and client")
struct LoopbackTests {
    @Test func keepAliveReusesOneConnection() throws {
        try withRunningServer { running in
            let client = try running.client()
            defer { client.close() }
            for index in 0..<20 {
                let response = try client.request(get("/n/\(index)"))
                #expect(response.status == 200)
                #expect(response.bodyText == "GET /n/\(index)")
                #expect(response.headers["Connection"] == nil)
                #expect(response.headers["Date"] != nil)
            }
            #expect(running.server.openConnectionCount == 1)
        }
    }
}

import Foundation
import HistoryClient
import SwiftUI

/// One conversation of a local server (`history-server --port 8080`), as
/// "ana": run the server, create the conversation, run this app.
@main
struct ChatScreenApp: App {
    private let client = ChatHistoryClient(baseURL: URL(string: "http://127.0.0.1:8080")!)

    var body: some Scene {
        WindowGroup {
            ChatScreenView(model: ChatScreenModel(client: client, conversationID: "general", me: "ana"))
        }
    }
}

// The lab's Tencent DNSPod D+ forms beside the plain one: the encrypted production form (dn and
// answer sealed with DES or AES under the lab's key) and the HTTPS token form.
import WireCiphers

extension HTTPDNSService {
    /// `GET /d?...`: `alg=des|aes` seals name and answer, `token=` is the HTTPS form, else plain.
    ///
    /// The SDK sources do not say how the service refuses a wrong id, key or token; the lab
    /// answers an empty body, which the SDK reads as "no answer".
    func tencentForms(_ request: LabRequest) -> Answer {
        let query = request.query
        func refused(_ format: String) -> Answer {
            Answer(response: .text(200, ""), format: format, host: "", isJSON: false)
        }
        if let token = query["token"] {
            guard token == keys.tencentToken, query["id"] == keys.tencentID else { return refused("tencent-token") }
            var answer = tencent(request)
            answer.format = "tencent-token"
            return answer
        }
        guard let name = query["alg"] else { return tencent(request) }
        guard let algorithm = TencentAlgorithm(rawValue: name) else { return refused("tencent-unknown-alg") }
        let format = "tencent-\(algorithm.rawValue)"
        let key = algorithm == .des ? keys.tencentDESKey : keys.tencentAESKey
        guard query["id"] == keys.tencentID, let sealed = query["dn"],
            let dn = try? algorithm.open(sealed, key: key), !dn.isEmpty
        else { return refused(format) }
        var answer = tencent(request, dn: dn)
        answer.format = format
        let plain = String(decoding: answer.response.body, as: UTF8.self)
        // An empty answer stays empty: there is nothing to seal.
        if !plain.isEmpty, let body = try? algorithm.seal(plain, key: key) {
            answer.response.body = Array(body.utf8)
        }
        return answer
    }
}

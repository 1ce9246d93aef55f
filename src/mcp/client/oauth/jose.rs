//! The few pieces of JOSE the client's OAuth needs, on `ring`: ES256 keys (made here
//! for DPoP, or read from a PKCS#8 PEM for `private_key_jwt`), compact JWS signing,
//! a public key's JWK and its RFC 7638 thumbprint, and random URL-safe strings.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::{SecureRandom as _, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

/// Base64url without padding, as JOSE and PKCE write bytes.
pub(crate) fn b64u(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `n` random bytes as base64url: a PKCE verifier, a state, a JWT id.
pub(crate) fn random(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    // The system's generator fails only where the OS has none; there is no safe
    // fallback to offer then.
    SystemRandom::new()
        .fill(&mut bytes)
        .expect("the system random number generator failed");
    b64u(bytes)
}

/// The S256 code challenge of a PKCE verifier.
pub(crate) fn s256(verifier: &str) -> String {
    b64u(Sha256::digest(verifier.as_bytes()))
}

/// Seconds since the epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// An ES256 (P-256, SHA-256) signing key.
pub(crate) struct Es256 {
    pair: EcdsaKeyPair,
}

impl std::fmt::Debug for Es256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Es256(…)")
    }
}

impl Es256 {
    /// A fresh key, for DPoP: it lives as long as the process.
    pub(crate) fn generate() -> Es256 {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("the system random number generator failed");
        Es256 {
            pair: EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref(), &rng)
                .expect("a key just made reads back"),
        }
    }

    /// A P-256 private key from PEM (`-----BEGIN PRIVATE KEY-----`, PKCS#8).
    pub(crate) fn from_pem(pem: &str) -> Result<Es256, String> {
        let body: String = pem
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("-----"))
            .collect();
        if !pem.contains("BEGIN PRIVATE KEY") {
            return Err("the key is not a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)".into());
        }
        let der = STANDARD
            .decode(body)
            .map_err(|e| format!("the key's PEM is not Base64: {e}"))?;
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &SystemRandom::new())
                .map_err(|e| format!("the key is not a P-256 (ES256) private key: {e}"))?;
        Ok(Es256 { pair })
    }

    /// The public key as a JWK, its members in RFC 7638's order.
    pub(crate) fn jwk(&self) -> Value {
        // An uncompressed point: 0x04, then X and Y of 32 bytes each.
        let point = self.pair.public_key().as_ref();
        json!({
            "crv": "P-256",
            "kty": "EC",
            "x": b64u(&point[1..33]),
            "y": b64u(&point[33..65]),
        })
    }

    /// A compact JWS of these claims under this header (`alg` is set here).
    pub(crate) fn sign(&self, mut header: Map<String, Value>, claims: &Value) -> String {
        header.insert("alg".into(), json!("ES256"));
        let input = format!(
            "{}.{}",
            b64u(Value::Object(header).to_string()),
            b64u(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .expect("ECDSA signing fails only without randomness");
        format!("{input}.{}", b64u(signature.as_ref()))
    }

    /// A DPoP proof (RFC 9449 §4.2) for a request: its method and URL (without query
    /// and fragment), the access token's hash when one is presented, and the server's
    /// nonce when it gave one.
    pub(crate) fn dpop_proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> String {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let mut claims = json!({
            "jti": random(16),
            "htm": method,
            "htu": htu,
            "iat": now(),
        });
        if let Some(token) = token {
            claims["ath"] = json!(b64u(Sha256::digest(token.as_bytes())));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        let mut header = Map::new();
        header.insert("typ".into(), json!("dpop+jwt"));
        header.insert("jwk".into(), self.jwk());
        self.sign(header, &claims)
    }

    /// A client assertion (RFC 7523 §2.2, `private_key_jwt`): the client as issuer and
    /// subject, the authorization server's issuer as audience, valid five minutes.
    pub(crate) fn client_assertion(&self, client_id: &str, audience: &str) -> String {
        let iat = now();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": random(16),
            "iat": iat,
            "exp": iat + 300,
        });
        let mut header = Map::new();
        header.insert("typ".into(), json!("JWT"));
        self.sign(header, &claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    fn part(jws: &str, n: usize) -> Value {
        let bytes = URL_SAFE_NO_PAD
            .decode(jws.split('.').nth(n).unwrap())
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn a_signed_proof_verifies_under_the_key_in_its_header() {
        let key = Es256::generate();
        let proof = key.dpop_proof("POST", "http://h/mcp?x=1#f", Some("tok"), Some("n1"));
        let header = part(&proof, 0);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        let claims = part(&proof, 1);
        assert_eq!(claims["htu"], "http://h/mcp");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["nonce"], "n1");
        assert_eq!(claims["ath"], b64u(Sha256::digest(b"tok")));
        let x = URL_SAFE_NO_PAD
            .decode(header["jwk"]["x"].as_str().unwrap())
            .unwrap();
        let y = URL_SAFE_NO_PAD
            .decode(header["jwk"]["y"].as_str().unwrap())
            .unwrap();
        let point = [&[4u8][..], &x, &y].concat();
        let (input, sig) = proof.rsplit_once('.').unwrap();
        let sig = URL_SAFE_NO_PAD.decode(sig).unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
            .verify(input.as_bytes(), &sig)
            .expect("the signature verifies");
        let mut tampered = input.to_string();
        tampered.push('x');
        assert!(
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
                .verify(tampered.as_bytes(), &sig)
                .is_err()
        );
    }

    #[test]
    fn the_jwk_is_written_as_rfc_7638_hashes_it() {
        // A server binds the token to the SHA-256 of the required members in
        // lexicographic order with no spaces: the JWK sent must serialize so.
        let key = Es256::generate();
        let jwk = key.jwk();
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        assert_eq!(jwk.to_string(), canonical);
        assert_eq!(jwk["x"].as_str().unwrap().len(), 43, "32 bytes, base64url");
    }

    #[test]
    fn pkce_s256_matches_rfc_7636s_example() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn a_pem_that_is_not_an_es256_key_is_refused_in_words() {
        assert!(Es256::from_pem("hello").unwrap_err().contains("PKCS#8"));
        let err = Es256::from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----")
            .unwrap_err();
        assert!(err.contains("P-256"), "{err}");
    }
}

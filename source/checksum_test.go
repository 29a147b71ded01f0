package source

import (
	"hash/crc64"
	"testing"
)

// TestChecksumForms reads checksums in the forms stores send them and
// checks the CRC-64/NVME implementation against hash/crc64 and the
// catalogue's check value.
func TestChecksumForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  Checksum
		want Checksum
	}{
		{"S3 single-part ETag", etagChecksum(`"9e107d9d372bb6826bd81d3542a419d6"`), Checksum{AlgMD5, "9e107d9d372bb6826bd81d3542a419d6"}},
		{"S3 multipart ETag", etagChecksum(`"9e107d9d372bb6826bd81d3542a419d6-3"`), Checksum{}},
		{"weak ETag", etagChecksum(`W/"abc"`), Checksum{}},
		{"S3 CRC64NVME", base64Checksum(AlgCRC64NVME, "rosUhgp5mIg="), Checksum{AlgCRC64NVME, "ae8b14860a799888"}},
		{"S3 composite", base64Checksum(AlgCRC32C, "yZRlqg==-2"), Checksum{}},
		{"wrong size", base64Checksum(AlgCRC32C, "rosUhgp5mIg="), Checksum{}},
		{"GCS header", googHash([]string{"crc32c=yZRlqg==,md5=nhB9nTcrtoJr2B01QqQZ1g=="}), Checksum{AlgCRC32C, "c99465aa"}},
		{"GCS empty header", googHash([]string{"crc32c=,md5="}), Checksum{}},
		{"cheapest", bestChecksum(Checksum{AlgMD5, "00"}, Checksum{}, Checksum{AlgSHA256, "11"}, Checksum{AlgCRC64NVME, "22"}), Checksum{AlgCRC64NVME, "22"}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
	// CRC-64/NVME of "123456789" is 0xae8b14860a799888 (the CRC catalogue).
	h := newChecksumHash(AlgCRC64NVME)
	h.Write([]byte("123456789"))
	if got := h.Sum(nil); string(got) != "\xae\x8b\x14\x86\x0a\x79\x98\x88" {
		t.Errorf("crc64nvme(123456789) = %x", got)
	}
	data := randomBytes(100_003, 5)
	// hash/crc64 with the CRC-64/NVME polynomial (reflected) is the
	// independent reference for the accelerated one.
	tab := crc64.MakeTable(0x9a6c9329ac4bc9b5)
	for _, cut := range []int{0, 1, 7, 8, 4096, 100_003} {
		h := newChecksumHash(AlgCRC64NVME)
		h.Write(data[:cut])
		h.Write(data[cut:])
		want := crc64.Checksum(data, tab)
		if got := h.Sum(nil); string(got) != string([]byte{byte(want >> 56), byte(want >> 48), byte(want >> 40), byte(want >> 32), byte(want >> 24), byte(want >> 16), byte(want >> 8), byte(want)}) {
			t.Errorf("cut at %d: %x, want %016x", cut, got, want)
		}
	}
}

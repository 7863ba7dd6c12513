/* ecg runtime header (placeholder) */
